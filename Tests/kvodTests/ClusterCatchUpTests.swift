import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// A kvod just started replays its start window through its watch before it
/// listens (docs/CLUSTER.md, "A kvod just started"): no client may see the
/// replica behind where etcd was when it started. Found by the history run
/// (ClusterHistoryTests, issue 35 item 7): when the watch was lost during that
/// replay (a liveness probe unanswered for 1.5 s under load, a member
/// stopped), kvod listened stale, as documented, but once the watch was back
/// it said `stale: false` while still thousands of revisions behind, so a
/// restarted kvod answered reads older than its earlier run had answered,
/// without a word. Now it is stale until it has applied the revision etcd had
/// when it started.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterCatchUpTests {
    @Test func aKvodWhoseStartReplayWasCutShortSaysStaleUntilItHasCaughtUp() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let writer = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let target = try RevisionMaker.makeRevisions(4_000, through: writer.socketPath)
        let late = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]], waitForSocket: false)
        // Its member stops while it replays the start window: the probe goes unanswered and kvod listens behind.
        try await waitUntil("the late kvod read the prefix", timeout: 30, recheckEvery: 0.002) { () async -> Bool in
            late.lastLogLine(containing: "over etcd") != nil
        }
        cluster.pause(member: 0)
        defer { cluster.resume(member: 0) }
        try await waitUntil("the late kvod listens", timeout: 30, recheckEvery: 0.02) { () async -> Bool in
            UnixSockets.canConnect(late.socketPath)
        }
        let replayed = late.lastLogLine(containing: "history from revision") ?? ""
        cluster.resume(member: 0)
        let (behind, stale) = try Self.readUntilCaughtUp(late.socketPath, target: target)
        print("start replay cut short (\(replayed)): \(behind) reads behind \(target), \(stale) of them stale")
        #expect(behind > 0, "the late kvod answered no read behind \(target) (\(replayed)): the test tested nothing")
        #expect(behind == stale, "\(behind - stale) of \(behind) reads behind \(target) did not say stale")
    }

    /// Gets as fast as it answers until a get reflects `target`: how many
    /// answered behind it, and how many of those said stale.
    private static func readUntilCaughtUp(_ socket: String, target: Int) throws -> (behind: Int, stale: Int) {
        let client = try LineClient(path: socket)
        var behind = 0, stale = 0
        try waitUntil("the late kvod has caught up with revision \(target)", timeout: 60, recheckEvery: 0) {
            let reply = try client.request(#"{"op":"get","object":"o0","keyPath":"n"}"#, timeout: 30).reply
            let seq = reply["seq"]?.intValue ?? reply["error"]?["seq"]?.intValue ?? 0
            guard seq < target else { return true }
            behind += 1
            if reply["stale"] == true || reply["error"]?["stale"] == true { stale += 1 }
            if behind == 1 {
                // A client resuming from what another kvod told it is asked to retry, not told it erred.
                let resumed = try client.request(#"{"op":"observe","object":"o0","keyPath":"n","since":\#(target),"id":"r"}"#,
                                                 timeout: 30).reply
                if resumed["ok"] == false {
                    #expect(resumed["error"]?["code"] == "unavailable", "\(resumed)")
                }
            }
            return false
        }
        // Caught up, the same since is taken.
        let resumed = try client.request(#"{"op":"observe","object":"o0","keyPath":"n","since":\#(target),"id":"r"}"#,
                                         timeout: 30).reply
        #expect(resumed["ok"] == true, "\(resumed)")
        return (behind, stale)
    }
}
