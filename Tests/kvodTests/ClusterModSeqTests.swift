import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// modSeqs over etcd (docs/CLUSTER.md, "modSeqs over etcd"): a kvod that
/// loaded the prefix at start gives every key path the modSeq a kvod that
/// followed the changes gives, so a compare-and-set read on one kvod holds
/// through another, and through the same kvod after a restart.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterModSeqTests {
    @Test func aKvodThatLoadedThePrefixGivesEachKeyPathTheModSeqOfTheKvodThatFollowedIt() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let arguments = ["--etcd", cluster.clientURLs[0]]
        let a = try await KVODProcess(arguments: arguments)
        let first = try Self.setTwoKeyPaths(through: a.socketPath)
        // B starts after both sets: it loads them from the prefix.
        let b = try await KVODProcess(arguments: arguments)
        let second = try Self.checkAgreementAndWriteThroughB(a.socketPath, b.socketPath, aWasSetAt: first)
        try await a.terminate()
        // A again: it loads the prefix too, a batch's record last for o.
        let restarted = try await KVODProcess(arguments: arguments)
        try Self.checkAgreementAfterRestart(restarted.socketPath, b.socketPath, aWasSetAt: second)
    }

    @Test func aKvodThatResyncedAfterACompactionGivesEachKeyPathTheModSeqOfTheKvodThatFollowedIt() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try waitUntilFollowing([a.socketPath, b.socketPath])
        try await cluster.kill(member: 1)
        try await cluster.waitUntilHealthy([cluster.clientURLs[0], cluster.clientURLs[2]])
        // B misses both sets, and the compaction leaves it nothing to follow: it reads the prefix again.
        let first = try Self.setTwoKeyPaths(through: a.socketPath)
        let last = try #require(try Self.modSeq(of: nil, from: LineClient(path: a.socketPath)))
        let compaction = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, [
            "--endpoints", cluster.clientURLs[0], "compact", String(last),
        ], environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(compaction.status == 0, "\(compaction.stderr)")
        try await cluster.restart(member: 1)
        try Self.checkAgreementAfterResync(a.socketPath, b.socketPath, aWasSetAt: first)
    }

    @Test func treesStayWithinEtcdsRequestLimitAndKvodsStillAgree() async throws {
        let cluster = try await EtcdCluster(size: 1, arguments: ["--max-request-bytes", "4096"])
        let arguments = ["--etcd", cluster.clientURLs[0], "--etcd-max-request-bytes", "4096"]
        let a = try await KVODProcess(arguments: arguments)
        try Self.setManyKeyPaths(through: a.socketPath, count: 70)
        let b = try await KVODProcess(arguments: arguments)
        try Self.checkAgreement(a.socketPath, b.socketPath, keyPaths: ["k0", "k35", "k69", nil])
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Sets `o.k0` … `o.k<count-1>` one by one to 40-byte strings: 70 of them
    /// make a document of about 3.5 KB, whose whole tree (about 0.8 KB) a
    /// 4096-byte `Txn` cannot carry beside it; every set is taken all the same.
    private static func setManyKeyPaths(through socket: String, count: Int) throws {
        try waitUntilFollowing([socket])
        let client = try LineClient(path: socket)
        let value = String(repeating: "x", count: 40)
        for index in 0..<count {
            let reply = try client.request(#"{"op":"set","object":"o","keyPath":"k\#(index)","value":"\#(value)"}"#,
                                           timeout: 30).reply
            try #require(reply["ok"] == true, "set \(index): \(reply)")
        }
    }

    /// B gives what A gives for each of `keyPaths` of `o` (nil: the whole
    /// document), and a set under A's modSeq of the first succeeds through B.
    private static func checkAgreement(_ a: String, _ b: String, keyPaths: [String?]) throws {
        try waitUntilFollowing([b])
        let onA = try LineClient(path: a), onB = try LineClient(path: b)
        for keyPath in keyPaths {
            #expect(try modSeq(of: keyPath, from: onB) == modSeq(of: keyPath, from: onA), "\(keyPath ?? "o")")
        }
        let first = try #require(try modSeq(of: keyPaths[0], from: onA))
        let conditional = try onB.request(#"{"op":"set","object":"o","keyPath":"\#(keyPaths[0]!)","value":1,"ifModSeq":\#(first)}"#,
                                          timeout: 30).reply
        #expect(conditional["ok"] == true, "\(conditional)")
    }

    /// Once B has resynced (it has `o.b`), it gives what A gives, `o.a` the first set's seq.
    private static func checkAgreementAfterResync(_ a: String, _ b: String, aWasSetAt first: Int) throws {
        let onA = try LineClient(path: a), onB = try LineClient(path: b)
        try waitUntil("B has resynced", timeout: 30) {
            try onB.request(#"{"op":"get","object":"o","keyPath":"b"}"#).reply["value"] == 2
        }
        for keyPath in ["a", "b", nil] {
            #expect(try modSeq(of: keyPath, from: onB) == modSeq(of: keyPath, from: onA), "\(keyPath ?? "o")")
        }
        #expect(try modSeq(of: "a", from: onB) == first)
    }

    /// Sets `o.a`, then `o.b`, through the kvod at `socket`; answers the first set's seq.
    private static func setTwoKeyPaths(through socket: String) throws -> Int {
        try waitUntilFollowing([socket])
        let client = try LineClient(path: socket)
        let first = try #require(try client.request(#"{"op":"set","object":"o","keyPath":"a","value":1}"#,
                                                    timeout: 30).reply["seq"]?.intValue)
        let second = try client.request(#"{"op":"set","object":"o","keyPath":"b","value":2}"#, timeout: 30).reply
        #expect(try #require(second["seq"]?.intValue) > first)
        return first
    }

    /// `get o a` (and `o b`, `o`) on A and on B agree; a set of `o.a` with
    /// the modSeq read from A succeeds through B; then a batch through B
    /// changes `o.b` and another object. Answers the seq of B's set of `o.a`.
    private static func checkAgreementAndWriteThroughB(_ a: String, _ b: String, aWasSetAt first: Int) throws -> Int {
        try waitUntilFollowing([b])
        let onA = try LineClient(path: a), onB = try LineClient(path: b)
        #expect(try modSeq(of: "a", from: onA) == first)
        for keyPath in ["a", "b", nil] {
            #expect(try modSeq(of: keyPath, from: onB) == modSeq(of: keyPath, from: onA), "\(keyPath ?? "o")")
        }
        let conditional = try onB.request(#"{"op":"set","object":"o","keyPath":"a","value":10,"ifModSeq":\#(first)}"#,
                                          timeout: 30).reply
        #expect(conditional["ok"] == true, "\(conditional)")
        let seq = try #require(conditional["seq"]?.intValue)
        let batch = try onB.request(#"""
            {"op":"batch","ops":[{"op":"set","object":"o","keyPath":"b","value":20},\#
            {"op":"set","object":"p","keyPath":"x","value":1}]}
            """#, timeout: 30).reply
        let batchSeq = try #require(batch["seq"]?.intValue, "\(batch)")
        try waitUntil("A has B's batch", timeout: 20) { try modSeq(of: "b", from: onA) == batchSeq }
        #expect(try modSeq(of: "a", from: onA) == seq && modSeq(of: "a", from: onB) == seq)
        return seq
    }

    /// The restarted A gives what B gives, and a set with B's modSeq of `o.a` succeeds through it.
    private static func checkAgreementAfterRestart(_ a: String, _ b: String, aWasSetAt seq: Int) throws {
        try waitUntilFollowing([a])
        let onA = try LineClient(path: a), onB = try LineClient(path: b)
        for keyPath in ["a", "b", nil] {
            #expect(try modSeq(of: keyPath, from: onA) == modSeq(of: keyPath, from: onB), "\(keyPath ?? "o")")
        }
        #expect(try modSeq(of: "a", from: onA) == seq)
        let conditional = try onA.request(#"{"op":"set","object":"o","keyPath":"a","value":11,"ifModSeq":\#(seq)}"#,
                                          timeout: 30).reply
        #expect(conditional["ok"] == true, "\(conditional)")
    }

    private static func modSeq(of keyPath: String?, from client: LineClient) throws -> Int? {
        let line = keyPath.map { #"{"op":"get","object":"o","keyPath":"\#($0)"}"# } ?? #"{"op":"get","object":"o"}"#
        return try client.request(line).reply["modSeq"]?.intValue
    }
}
