import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Pipelined change ops over etcd (docs/CLUSTER.md, "Pipelined changes"): a
/// connection's change requests read in a row go as one `Txn`, yet each keeps
/// its own reply, in request order, and its own events on every kvod; an op
/// that would fail fails alone.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterPipelineTests {
    @Test func pipelinedSetsKeepTheirOrderAndRepliesAndAnotherKvodsObserverSeesEachAtItsSeq() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkOrderAndSeqs(writer: a.socketPath, observer: b.socketPath)
    }

    @Test func aFailingOpInTheMiddleOfAPipelineFailsAloneAndItsNeighboursAreApplied() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkFailuresStayAlone(writer: a.socketPath, observer: b.socketPath)
    }

    @Test func aPipelineOverEtcdsTxnOpsGoesInTxnsWithinTheLimit() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-max-txn-ops", "4"])
        try Self.checkTxnsWithinTheLimit(kvod.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Ten objects would be 10 Txn operations, over the limit of 4: they go
    /// four objects to a Txn at most (a document each, its record inside), in
    /// order, and all are applied.
    private static func checkTxnsWithinTheLimit(_ socket: String) throws {
        try waitUntilFollowing([socket])
        let writer = try LineClient(path: socket)
        try writer.write(Array((0..<10).map { #"{"id":\#($0),"op":"set","object":"o\#($0)","keyPath":"k","value":\#($0)}"# + "\n" }
            .joined().utf8))
        var seqs: [Int] = []
        for index in 0..<10 {
            let reply = try writer.readJSON(timeout: 30)
            #expect(reply["id"]?.intValue == index && reply["ok"] == true, "\(reply)")
            seqs.append(reply["seq"]?.intValue ?? -1)
        }
        let perRevision = Dictionary(grouping: seqs) { $0 }.values.map(\.count)
        #expect(perRevision.allSatisfy { $0 <= 4 } && seqs == seqs.sorted(), "four at most to a revision: \(seqs)")
    }

    /// 120 sets over two objects, an undecodable line and a `get` among them,
    /// written at once: replies in request order, the get seeing the set
    /// before it, fewer revisions than sets (they went together), and the
    /// other kvod's observer told every set in order at its reply's seq.
    private static func checkOrderAndSeqs(writer: String, observer: String) throws {
        try waitUntilFollowing([writer, observer])
        let watcher = try LineClient(path: observer)
        for object in ["p", "q"] {
            _ = try watcher.request(#"{"op":"observe","object":"\#(object)","keyPath":"n","options":["new"]}"#)
        }
        var lines: [String] = []
        for index in 0..<120 {
            lines.append(#"{"id":\#(index),"op":"set","object":"\#(index % 3 == 0 ? "q" : "p")","keyPath":"n","value":\#(index)}"#)
            if index == 40 { lines.append("not json") }
            if index == 80 { lines.append(#"{"id":"get","op":"get","object":"p","keyPath":"n"}"#) }
        }
        let client = try LineClient(path: writer)
        try client.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        var seqs: [Int] = []
        for index in 0..<120 {
            let reply = try client.readJSON(timeout: 30)
            #expect(reply["id"]?.intValue == index && reply["ok"] == true, "\(reply)")
            seqs.append(reply["seq"]?.intValue ?? -1)
            if index == 40 {
                let refused = try client.readJSON(timeout: 30)
                #expect(refused["ok"] == false && refused["id"] == nil, "the bad line's reply in its place: \(refused)")
            }
            if index == 80 {
                let read = try client.readJSON(timeout: 30)
                #expect(read["id"] == "get" && read["value"] == 80, "the get sees the set before it: \(read)")
            }
        }
        #expect(seqs == seqs.sorted(), "\(seqs)")
        #expect(Set(seqs).count < 60, "sets read together share a Txn: \(Set(seqs).count) revisions")
        for index in 0..<120 {
            let event = try watcher.readJSON(timeout: 30)
            #expect(event["new"]?.intValue == index && event["seq"]?.intValue == seqs[index], "\(index): \(event)")
        }
    }

    /// A pipeline with a condition that fails, one that holds and a set
    /// through a number: the failing two answer their own error (not a
    /// batch's `ops[i]`), every other op is applied and told, in order.
    private static func checkFailuresStayAlone(writer: String, observer: String) throws {
        try waitUntilFollowing([writer, observer])
        let watcher = try LineClient(path: observer)
        _ = try watcher.request(#"{"op":"observe","object":"p","keyPaths":["n","h"],"options":["new"]}"#)
        var lines = (0..<10).map { #"{"id":\#($0),"op":"set","object":"p","keyPath":"n","value":\#($0)}"# }
        lines.append(#"{"id":"fails","op":"set","object":"p","keyPath":"n","value":-1,"ifValue":3}"#)
        lines.append(#"{"id":"holds","op":"set","object":"p","keyPath":"h","value":true,"ifModSeq":0}"#)
        lines.append(#"{"id":"number","op":"set","object":"p","keyPath":"n.deeper","value":1}"#)
        lines += (10..<20).map { #"{"id":\#($0),"op":"set","object":"p","keyPath":"n","value":\#($0)}"# }
        let client = try LineClient(path: writer)
        try client.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        var applied: [(id: JSONValue, seq: Int)] = []
        for line in lines {
            let id = try JSONReader.parse(Array(line.utf8))["id"]!
            let reply = try client.readJSON(timeout: 30)
            #expect(reply["id"] == id, "\(reply)")
            switch id {
            case "fails":
                #expect(reply["error"]?["code"] == "precondition_failed", "\(reply)")
            case "number":
                #expect(reply["error"]?["code"] == "not_an_object", "\(reply)")
            default:
                #expect(reply["ok"] == true, "\(reply)")
                applied.append((id, reply["seq"]?.intValue ?? -1))
            }
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(!message.hasPrefix("ops[") && reply["error"]?["index"] == nil, "its own error: \(reply)")
        }
        for (id, seq) in applied {
            let event = try watcher.readJSON(timeout: 30)
            #expect(event["seq"]?.intValue == seq, "\(id): \(event)")
            if let n = id.intValue { #expect(event["keyPath"] == "n" && event["new"]?.intValue == n, "\(event)") }
        }
        let reader = try LineClient(path: observer)
        #expect(try reader.request(#"{"op":"get","object":"p"}"#).reply["value"] == ["n": 19, "h": true])
    }
}
