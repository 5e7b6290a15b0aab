import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `since` on a kvod that started after the changes (docs/CLUSTER.md, "A kvod
/// just started"): it replays them as the kvod that ran all along does, as long
/// as etcd still holds their revisions; a `since` older than etcd's compaction
/// is `compacted`.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterSinceTests {
    @Test func aKvodStartedAfterTheChangesReplaysEverySinceAsTheKvodThatRanAllAlong() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let start = try Self.seq(a.socketPath)
        var seqs = try Self.makeChanges(through: a.socketPath, upTo: 4)
        // Outside kvod: a revision of another prefix (seqs skip it), and a document written by etcdctl.
        _ = try await ClusterDaemonTests.etcdctl(cluster, ["put", "/elsewhere/k", "v"])
        _ = try await ClusterDaemonTests.etcdctl(cluster, ["put", "/kvod/o/ext", #"{"z":1}"#])
        seqs += try Self.makeChanges(through: a.socketPath, from: 4)
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        #expect(try Self.seq(b.socketPath) == seqs.last, "b listens once it has caught up")
        let replayed = try Self.compareReplays(a.socketPath, b.socketPath, since: [start - 1, start] + seqs)
        #expect(replayed >= 3 * seqs.count, "every change is replayed from the start: \(replayed) events")
    }

    @Test func aSinceOlderThanEtcdsCompactionIsCompactedOnAKvodStartedAfterIt() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        _ = try Self.makeChanges(through: a.socketPath, upTo: 4)
        // Compacted at a revision of another prefix, another one after it: b's history starts after
        // the compact revision, its first change held two revisions later.
        let compact = try await Self.putElsewhere(cluster)
        _ = try await Self.putElsewhere(cluster)
        let told = try await ClusterDaemonTests.etcdctl(cluster, ["compact", String(compact)])
        #expect(told == "compacted revision \(compact)")
        let seqs = try Self.makeChanges(through: a.socketPath, from: 4)
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkCompaction(a.socketPath, b.socketPath, compact: compact, seqs: [compact] + seqs)
    }

    @Test func aKvodStartedAfterTheChangesReadsAtMostHistoryRevisionsBackAndHoldsWhatTheOtherHolds() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let arguments = ["--etcd", cluster.clientURLs[0], "--history", "3"]
        let a = try await KVODProcess(arguments: arguments)
        let start = try Self.seq(a.socketPath)
        let seqs = try Self.makeChanges(through: a.socketPath)
        let b = try await KVODProcess(arguments: arguments)
        // The last three revisions hold five changes (pipelined sets last): both keep the newest three.
        _ = try Self.compareReplays(a.socketPath, b.socketPath, since: [start] + seqs)
        #expect(try ClusterDaemonTests.info(b.socketPath)["oldestSeq"]?.intValue == seqs.last)
        let log = try String(contentsOfFile: b.stderrPath, encoding: .utf8)
        #expect(log.contains("history from revision \(seqs.last! - 3):"), "\(log)")
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Changes of every kind through `socket`, each waited for, steps `first`
    /// up to `last` (not included; past the last step, pipelined sets end
    /// them); the seqs their replies told.
    private static func makeChanges(through socket: String, from first: Int = 0, upTo last: Int = .max) throws -> [Int] {
        try waitUntilFollowing([socket])
        let client = try LineClient(path: socket)
        let steps = [
            #"{"op":"set","object":"o","keyPath":"name","value":"x"}"#,
            #"{"op":"set","object":"o","keyPath":"list","value":[1,2,3]}"#,
            #"{"op":"insert","object":"o","keyPath":"list","index":1,"values":[9]}"#,
            #"{"op":"set","object":"p","value":{"a":{"b":1}}}"#,
            #"{"op":"replace","object":"o","keyPath":"list","indexes":[0,2],"values":[7,8]}"#,
            #"{"op":"batch","ops":[{"op":"set","object":"o","keyPath":"name","value":"y"},{"op":"delete","object":"p"},{"op":"set","object":"q","keyPath":"k","value":1}]}"#,
            #"{"op":"remove","object":"o","keyPath":"list","indexes":[1]}"#,
            #"{"op":"delete","object":"o","keyPath":"name"}"#,
        ]
        var seqs: [Int] = []
        for step in steps[first..<min(last, steps.count)] {
            let reply = try client.request(step, timeout: 30).reply
            seqs.append(try #require(reply["seq"]?.intValue, "\(step): \(reply)"))
        }
        guard last > steps.count else { return seqs }
        // Pipelined sets: one Txn, one revision.
        try client.pipeline(count: 3) { #"{"op":"set","object":"q","keyPath":"n\#($0)","value":\#($0)}"# }
        seqs.append(try Self.seq(socket))
        return seqs
    }

    /// Sends the same `observe` requests with each `since` to both kvods on
    /// fresh connections: the events and replies (`compacted` ones too) must be
    /// the same. Returns how many events the replays brought in all.
    private static func compareReplays(_ a: String, _ b: String, since points: [Int]) throws -> Int {
        let requests = [
            #"{"op":"observe","id":1,"prefix":"","options":["new","old","prior"],"since":SINCE}"#,
            #"{"op":"observe","id":2,"object":"o","keyPath":"list","options":["new","old"],"since":SINCE}"#,
            #"{"op":"observe","id":3,"object":"o","options":["new","old"],"since":SINCE}"#,
        ]
        var replayed = 0
        for since in points {
            for request in requests {
                let line = request.replacingOccurrences(of: "SINCE", with: String(since))
                let fromA = try LineClient(path: a).request(line)
                let fromB = try LineClient(path: b).request(line)
                #expect(fromB.reply == fromA.reply, "\(line)")
                #expect(fromB.events == fromA.events, "\(line): a \(fromA.events), b \(fromB.events)")
                replayed += fromA.events.count
            }
        }
        return replayed
    }

    /// On `b`, started after etcd compacted up to `compact`: a `since` from
    /// `compact` on (`seqs`) replays as on `a`; one older is `compacted`, and
    /// the oldest `since` that works is `compact` (`oldestSeq` − 1, as in local mode).
    private static func checkCompaction(_ a: String, _ b: String, compact: Int, seqs: [Int]) throws {
        let refused = try LineClient(path: b).request(
            #"{"op":"observe","object":"o","since":\#(compact - 1)}"#).reply
        #expect(refused["error"]?["code"] == "compacted", "\(refused)")
        #expect(refused["error"]?["oldestSeq"]?.intValue == compact + 1, "\(refused)")
        #expect(try ClusterDaemonTests.info(b)["oldestSeq"]?.intValue == compact + 1)
        let replayed = try compareReplays(a, b, since: seqs)
        #expect(replayed >= 3 * (seqs.count - 1), "every change after the compaction: \(replayed) events")
    }

    /// Puts a key outside kvod's prefix; its revision.
    private static func putElsewhere(_ cluster: EtcdCluster) async throws -> Int {
        let told = try await ClusterDaemonTests.etcdctl(cluster, ["put", "/elsewhere/k", "v", "-w", "json"])
        let header = try JSONReader.parse(Array(told.utf8))["header"]
        return try #require(header?["revision"]?.intValue, "\(told)")
    }

    private static func seq(_ socket: String) throws -> Int {
        try #require(try ClusterDaemonTests.info(socket)["seq"]?.intValue)
    }
}
