import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `batch` over etcd and etcd's limits (docs/CLUSTER.md): a batch is one
/// `Txn`, one revision, replayed op by op by every kvod; a request etcd
/// would refuse for its size or its operations is refused by kvod first.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterBatchTests {
    /// Two objects, several ops on each, an op that changes nothing, conditions that hold.
    static let batch = #"""
        {"op":"batch","ops":[\#
        {"op":"set","object":"a","keyPath":"x","value":1,"ifModSeq":0},\#
        {"op":"insert","object":"b","keyPath":"list","values":[1,2,3]},\#
        {"op":"delete","object":"b","keyPath":"missing"},\#
        {"op":"set","object":"a","keyPath":"x","value":2,"ifValue":1},\#
        {"op":"remove","object":"b","keyPath":"list","index":0},\#
        {"op":"replace","object":"b","keyPath":"list","index":1,"value":30},\#
        {"op":"set","object":"a","keyPath":"y","value":{"z":true}}]}
        """#

    @Test func aBatchThroughOneKvodReachesAnotherKvodsObserverAsLocalModeTellsIt() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let local = try await KVODProcess()
        let (overEtcd, etcdReply) = try Self.eventsOfTheBatch(writer: a.socketPath, observer: b.socketPath)
        let (inLocalMode, localReply) = try Self.eventsOfTheBatch(writer: local.socketPath, observer: local.socketPath)
        #expect(try Self.value(of: "b", "list", at: b.socketPath) == [2, 30])
        #expect(overEtcd.map(\.told) == inLocalMode.map(\.told))
        #expect(overEtcd.count == 6)
        // One Txn, one revision: every op's seq is it; an op that changed nothing has none, as locally.
        let seq = try #require(etcdReply["seq"]?.intValue)
        #expect(overEtcd.allSatisfy { $0.seq == seq }, "\(overEtcd)")
        #expect(etcdReply["seqs"] == .array(localReply["seqs"]!.arrayValue!.map { $0 == .null ? .null : etcdReply["seq"]! }))
        #expect(localReply["seqs"]?.arrayValue?.filter { $0 == .null }.count == 1)
    }

    @Test func aBatchWhoseConditionFailsChangesNothingOnEitherKvod() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkFailedConditionChangesNothing(a.socketPath, b.socketPath)
    }

    @Test func twoKvodsRacingBatchesOnTheSameObjectsBothSucceedWithOneOrder() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try Self.raceBatches([a.socketPath, b.socketPath], perWriter: 15)
    }

    @Test func aBatchOverEtcdsTxnOpsIsRefusedByKvodNamingTheLimitAndChangesNothing() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkTxnOpsLimit(kvod.socketPath)
    }

    @Test func aSetOverEtcdsRequestBytesIsRefusedByKvodNamingTheLimitAndChangesNothing() async throws {
        let cluster = try await EtcdCluster(size: 1, arguments: ["--max-request-bytes", "4096"])
        let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-max-request-bytes", "4096"])
        try Self.checkRequestBytesLimit(kvod.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// A batch whose second op's condition fails: nothing of it on either kvod, nobody told.
    private static func checkFailedConditionChangesNothing(_ a: String, _ b: String) throws {
        try waitUntilFollowing([a, b])
        let writer = try LineClient(path: a)
        let first = try writer.request(#"{"op":"set","object":"a","keyPath":"x","value":1}"#, timeout: 30).reply
        let observer = try LineClient(path: b)
        try waitUntil("b has a's set", timeout: 20) {
            try observer.request(#"{"op":"get","object":"a","keyPath":"x"}"#).reply["value"] == 1
        }
        for target in ["a", "b"] {
            _ = try observer.request(#"{"op":"observe","object":"\#(target)","options":["new"]}"#)
        }
        let refused = try writer.request(#"""
            {"op":"batch","ops":[{"op":"set","object":"b","keyPath":"y","value":1},\#
            {"op":"set","object":"a","keyPath":"x","value":3,"ifValue":2}]}
            """#, timeout: 30).reply
        #expect(refused["error"]?["code"] == "precondition_failed" && refused["error"]?["index"] == 1, "\(refused)")
        for socket in [a, b] {
            let reader = try LineClient(path: socket)
            let x = try reader.request(#"{"op":"get","object":"a","keyPath":"x"}"#).reply
            #expect(x["value"] == 1 && x["modSeq"] == first["seq"], "\(x)")
            #expect(try reader.request(#"{"op":"get","object":"b"}"#).reply["error"]?["code"] == "not_found")
        }
        let marker = try writer.request(#"{"op":"set","object":"b","keyPath":"m","value":true}"#, timeout: 30).reply
        let next = try observer.readJSON(timeout: 30)
        #expect(next["seq"] == marker["seq"] && next["object"] == "b", "nothing before the marker: \(next)")
        // A batch that changes nothing (its compares alone go to etcd) answers the current seq.
        let nothing = try writer.request(#"""
            {"op":"batch","ops":[{"op":"delete","object":"none","keyPath":"k","ifModSeq":0}]}
            """#, timeout: 30).reply
        #expect(nothing["ok"] == true && nothing["seq"] == marker["seq"] && nothing["seqs"] == [.null], "\(nothing)")
    }

    /// 129 objects are refused before etcd, 128 taken: the count is etcd's.
    private static func checkTxnOpsLimit(_ socket: String) throws {
        try waitUntilFollowing([socket])
        let client = try LineClient(path: socket)
        func batch(objects: Int) -> String {
            #"{"op":"batch","ops":["# + (0..<objects).map { #"{"op":"set","object":"o\#($0)","keyPath":"k","value":1}"# }
                .joined(separator: ",") + "]}"
        }
        // 129 objects: 129 puts (each document with its record inside), over etcd's default 128.
        let refused = try client.request(batch(objects: 129), timeout: 30).reply
        #expect(refused["error"]?["code"] == "limit_exceeded", "\(refused)")
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("--max-txn-ops (128") && message.contains("129 operations"), "\(message)")
        #expect(try client.request(#"{"op":"list","prefix":"o"}"#).reply["objects"] == [])
        // 128 objects: exactly 128, which etcd takes.
        let taken = try client.request(batch(objects: 128), timeout: 30).reply
        #expect(taken["ok"] == true, "\(taken)")
    }

    /// With etcd's and kvod's request limit at 4096 bytes: a set and a batch over it are refused, one under it taken.
    private static func checkRequestBytesLimit(_ socket: String) throws {
        try waitUntilFollowing([socket])
        let client = try LineClient(path: socket)
        let observer = try LineClient(path: socket)
        _ = try observer.request(#"{"op":"observe","object":"o","options":["new"]}"#)
        let big = String(repeating: "x", count: 4100)
        let refused = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(big)"}"#, timeout: 30).reply
        #expect(refused["error"]?["code"] == "too_large", "\(refused)")
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("--max-request-bytes (4096") && message.contains("this set"), "\(message)")
        // A whole document is one value: a batch that grows it past the limit is refused too.
        let half = String(repeating: "y", count: 2100)
        let batch = try client.request(#"""
            {"op":"batch","ops":[{"op":"set","object":"o","keyPath":"a","value":"\#(half)"},\#
            {"op":"set","object":"o","keyPath":"b","value":"\#(half)"}]}
            """#, timeout: 30).reply
        #expect(batch["error"]?["code"] == "too_large" && batch["error"]?["message"]?.stringValue?.contains("this batch") == true,
                "\(batch)")
        #expect(try client.request(#"{"op":"get","object":"o"}"#).reply["error"]?["code"] == "not_found")
        let fits = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(half)"}"#, timeout: 30).reply
        #expect(fits["ok"] == true, "\(fits)")
        let event = try observer.readJSON(timeout: 30)
        #expect(event["seq"] == fits["seq"], "the refused requests told nobody: \(event)")
    }

    struct Event: Equatable, CustomStringConvertible {
        var told: String
        var seq: Int
        var description: String { "\(seq) \(told)" }
    }

    /// Observes `a` and `b` on `observer`, sends ``batch`` through `writer`;
    /// returns what the observer was told and the batch's reply.
    private static func eventsOfTheBatch(writer: String, observer: String) throws -> ([Event], JSONValue) {
        try waitUntilFollowing([writer, observer])
        let watcher = try LineClient(path: observer)
        _ = try watcher.request(#"{"op":"observe","object":"a","keyPaths":["x","y"],"options":["new","old"]}"#)
        _ = try watcher.request(#"{"op":"observe","object":"b","keyPath":"list","options":["new","old"]}"#)
        let reply = try LineClient(path: writer).request(batch, timeout: 30).reply
        #expect(reply["ok"] == true, "\(reply)")
        let events = try (0..<6).map { _ in
            let event = try watcher.readJSON(timeout: 30)
            let told = ["object", "keyPath", "kind", "indexes", "old", "new"].map { "\(event[$0] ?? .null)" }
            return Event(told: told.joined(separator: " "), seq: event["seq"]?.intValue ?? -1)
        }
        return (events, reply)
    }


    private static func value(of object: String, _ keyPath: String, at socket: String) throws -> JSONValue? {
        try LineClient(path: socket).request(#"{"op":"get","object":"\#(object)","keyPath":"\#(keyPath)"}"#).reply["value"]
    }

    /// Each writer (one per kvod) pipelines `perWriter` batches that append
    /// its tag to two objects' lists; every batch succeeds, both lists end
    /// in one order (each batch whole at one place), and each kvod's observer
    /// sees the same stream.
    private static func raceBatches(_ sockets: [String], perWriter: Int) throws {
        try waitUntilFollowing(sockets)
        let observers = try sockets.map { try LineClient(path: $0) }
        for observer in observers {
            for object in ["p", "q"] {
                _ = try observer.request(#"{"op":"observe","object":"\#(object)","keyPath":"list","options":["new"]}"#)
            }
        }
        let writers = try sockets.map { try LineClient(path: $0) }
        for (index, writer) in writers.enumerated() {
            let lines = (0..<perWriter).map { n in
                #"{"op":"batch","ops":[{"op":"insert","object":"p","keyPath":"list","value":"w\#(index)-\#(n)"},"#
                    + #"{"op":"insert","object":"q","keyPath":"list","value":"w\#(index)-\#(n)"}]}"#
            }
            try writer.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        }
        var seqs: Set<Int> = []
        for writer in writers {
            for _ in 0..<perWriter {
                let reply = try writer.readJSON(timeout: 60)
                #expect(reply["ok"] == true, "\(reply)")
                #expect(reply["seqs"]?.arrayValue?.count == 2 && reply["seqs"]?.arrayValue?.first == reply["seq"], "\(reply)")
                if let seq = reply["seq"]?.intValue { seqs.insert(seq) }
            }
        }
        #expect(seqs.count == perWriter * writers.count, "each batch its own revision")
        let reader = try LineClient(path: sockets[0])
        // Read-your-writes holds per kvod: the other writer's last batches may still be on their way here.
        let last = seqs.max() ?? 0
        try waitUntil("kvod 0 has applied revision \(last)", timeout: 30) {
            (try reader.request(#"{"op":"info"}"#).reply["seq"]?.intValue ?? 0) >= last
        }
        let p = try reader.request(#"{"op":"get","object":"p","keyPath":"list"}"#).reply["value"]
        let q = try reader.request(#"{"op":"get","object":"q","keyPath":"list"}"#).reply["value"]
        #expect(p?.arrayValue?.count == perWriter * writers.count && p == q, "\(p ?? .null) vs \(q ?? .null)")
        var streams: [[String]] = []
        for observer in observers {
            let events = try (0..<(2 * seqs.count)).map { _ in try observer.readJSON(timeout: 30) }
            #expect(Set(events.compactMap { $0["seq"]?.intValue }) == seqs)
            streams.append(events.map { "\($0["seq"]!) \($0["object"]!) \($0["new"] ?? .null)" })
        }
        #expect(streams[0] == streams[1])
    }
}
