import Dispatch
import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 35 item 2: never silently stale. A member under SIGSTOP (a hung
/// process, a frozen VM) keeps its connections (its kernel answers, TCP
/// keepalive too) and sends nothing: its kvod said `stale: false, lag 0` for
/// 16 s while its observers missed every change. Now a probe a second finds it.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterStaleTests {
    @Test func aKvodWhoseMemberIsStoppedSaysStaleWithinFiveSecondsAndCatchesUpWhenItRuns() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try Self.setUntilOK(0, through: b.socketPath)
        try await waitUntil("a has the first value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["value"] == 0
        }
        cluster.pause(member: 0)
        defer { cluster.resume(member: 0) }
        let paused = ContinuousClock.now
        try await waitUntil("a says stale", timeout: 5, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["stale"] == true
        }
        print("stopped member: a said stale \(ContinuousClock.now - paused) after the SIGSTOP")
        // While its member is stopped, a's changes are refused at once, not left hanging.
        let refused = try Self.set(5, through: a.socketPath)
        #expect(refused["error"]?["code"] == "unavailable", "\(refused)")
        #expect(try Self.info(a.socketPath)["cluster"]?["stale"] == true)
        try Self.setUntilOK(1, through: b.socketPath)
        cluster.resume(member: 0)
        try await waitUntil("a follows again and has the value set meanwhile", timeout: 20,
                            recheckEvery: 0.05) { () async throws -> Bool in
            let reply = try Self.get(a.socketPath)
            return reply["value"] == 1 && reply["stale"] == nil
        }
    }

    @Test func aKvodWithEveryEndpointMovesOnFromAStoppedMember() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs.joined(separator: ",")])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try Self.setUntilOK(0, through: b.socketPath)
        try await waitUntil("a has the first value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["value"] == 0
        }
        let endpoint = try Self.info(a.socketPath)["cluster"]?["endpoint"]?.stringValue
        let index = try #require(cluster.clientURLs.firstIndex { $0 == endpoint })
        cluster.pause(member: index)
        defer { cluster.resume(member: index) }
        let writer = index == 1 ? try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[2]]) : b
        try Self.setUntilOK(1, through: writer.socketPath)
        try await waitUntil("a moved on and has the value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            let reply = try Self.get(a.socketPath)
            return reply["value"] == 1 && reply["stale"] == nil
        }
        #expect(try Self.info(a.socketPath)["cluster"]?["endpoint"]?.stringValue != endpoint)
    }

    /// Other prefixes' writes move etcd's revision and give this kvod's watch
    /// nothing to pass: the liveness check must not take that for a stall.
    @Test func aKvodWhosePrefixIsQuietStaysFreshWhileOtherKeysAreWritten() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.setUntilOK(0, through: a.socketPath)
        let start = ContinuousClock.now
        var puts = 0
        // Six seconds of writes elsewhere: twice the probes a stall needs.
        while ContinuousClock.now - start < .seconds(6), puts < 2_000 {
            let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, [
                "--endpoints", cluster.clientURLs[0], "put", "/elsewhere/k", String(puts),
            ], environment: ["ETCDCTL_API": "3"], timeout: 10)
            #expect(run.status == 0, "\(run.stderr)")
            puts += 1
            #expect(try Self.get(a.socketPath)["stale"] == nil, "stale after \(puts) writes elsewhere")
        }
        #expect(try Self.info(a.socketPath)["cluster"]?["stale"] == false)
    }

    /// Issue 33 over etcd: a watch that catches up gets many revisions in one
    /// response (etcd sends up to 1,000, as to a kvod that starts and fills its
    /// history), which kvod applied in one loop turn, holding every client for
    /// as long. Now a slice of whole revisions a turn.
    @Test func aKvodCatchingUpAppliesWhatItMissedASliceOfRevisionsATurn() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.setUntilOK(0, through: b.socketPath)
        // 20 revisions of 50 changes each, which a kvod started afterwards replays from its watch.
        try Self.writeBatches(20, of: 50, through: b.socketPath)
        let target = try #require(try Self.info(b.socketPath)["cluster"]?["appliedRevision"]?.intValue)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try await waitUntil("a applied every revision", timeout: 20, recheckEvery: 0.05) { () async throws -> Bool in
            let cluster = try Self.info(a.socketPath)["cluster"]
            return (cluster?["appliedRevision"]?.intValue ?? 0) >= target && cluster?["stale"] == false
        }
        let reply = try Self.request(#"{"op":"get","object":"c/49","keyPath":"v"}"#, a.socketPath)
        #expect(reply["value"] == 19, "\(reply)")
        // Slices of about 512 events, whole revisions (here 50 events each): a slice of ten
        // revisions and more shows they came in one response, and none has more than eleven.
        let largest = try #require(try Self.info(a.socketPath)["cluster"]?["largestWatchSlice"]?.intValue)
        #expect(largest >= 500, "the catch-up came in responses too small to need slicing: \(largest)")
        #expect(largest <= 512 + 50, "one turn applied \(largest) events")
    }

    /// A catch-up larger than `--etcd-watch-buffer`: the watch is left unread
    /// while the slices apply what waits, rather than every slice applied in
    /// one turn to keep the queue bounded.
    @Test func aCatchUpPastTheWatchBufferPausesTheWatchAndStillAppliesASliceATurn() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.setUntilOK(0, through: b.socketPath)
        // Each document carries 2 KB, so each change's event does: the catch-up's one response
        // is 1,000 events of over 2 KB, thirty times 64 KiB.
        try Self.pad(50, objectsWith: 2_048, through: b.socketPath)
        try Self.writeBatches(20, of: 50, through: b.socketPath)
        let target = try #require(try Self.info(b.socketPath)["cluster"]?["appliedRevision"]?.intValue)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-watch-buffer", "64k"])
        try await waitUntil("a applied every revision", timeout: 20, recheckEvery: 0.05) { () async throws -> Bool in
            let cluster = try Self.info(a.socketPath)["cluster"]
            return (cluster?["appliedRevision"]?.intValue ?? 0) >= target && cluster?["stale"] == false
        }
        #expect(try Self.request(#"{"op":"get","object":"c/49","keyPath":"v"}"#, a.socketPath)["value"] == 19)
        let info = try #require(try Self.info(a.socketPath)["cluster"])
        #expect((info["watchPauses"]?.intValue ?? 0) >= 1, "the watch was never paused: \(info)")
        #expect((info["largestWatchSlice"]?.intValue ?? .max) <= 512 + 50, "one turn applied more than a slice: \(info)")
        #expect(info["unappliedEvents"] == 0)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    private static func request(_ line: String, _ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(line).reply
    }

    /// `count` batches, each setting `v` of objects `c/0`… `c/<size - 1>` to the batch's number.
    private static func writeBatches(_ count: Int, of size: Int, through socket: String) throws {
        let writer = try LineClient(path: socket)
        for round in 0..<count {
            let ops = (0..<size).map { #"{"op":"set","object":"c/\#($0)","keyPath":"v","value":\#(round)}"# }
            let reply = try writer.request(#"{"op":"batch","ops":[\#(ops.joined(separator: ","))]}"#, timeout: 20).reply
            guard reply["ok"] == true else { throw TestFailure("batch \(round): \(reply)") }
        }
    }

    /// Sets `pad` of objects `c/0`… to `bytes` letters, in one batch.
    private static func pad(_ count: Int, objectsWith bytes: Int, through socket: String) throws {
        let pad = String(repeating: "p", count: bytes)
        let ops = (0..<count).map { #"{"op":"set","object":"c/\#($0)","keyPath":"pad","value":"\#(pad)"}"# }
        let reply = try LineClient(path: socket).request(#"{"op":"batch","ops":[\#(ops.joined(separator: ","))]}"#, timeout: 20).reply
        guard reply["ok"] == true else { throw TestFailure("padding: \(reply)") }
    }

    private static func get(_ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply
    }

    private static func info(_ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"info"}"#).reply
    }

    private static func set(_ value: Int, through socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#,
                                             timeout: 20).reply
    }

    /// Sets until a set is ok (an election may be under way), for 20 s at most.
    private static func setUntilOK(_ value: Int, through socket: String) throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let reply = try set(value, through: socket)
            if reply["ok"] == true { return }
            guard ContinuousClock.now < deadline else { throw TestFailure("set \(value) never ok: \(reply)") }
            guard reply["error"]?["code"] == "unavailable" else { throw TestFailure("set \(value): \(reply)") }
            // Each try is a request: an unavailable answer comes at once or after etcd's own timeout.
        }
    }
}
