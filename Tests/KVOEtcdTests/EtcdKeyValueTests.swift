import KVOEtcd
import KVOTestSupport
import Testing

/// KVOEtcd's reads, writes and transactions against a real 3-member etcd cluster.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct EtcdKeyValueTests {
    @Test func putThenRangeOverThePrefixReadsEveryValueBackWithItsRevisions() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let first = try await session.put("/kvod/a", "one")
        let second = try await session.put("/kvod/b", #"{"x":[1,2]}"#)
        _ = try await session.put("/kvodx", "outside the prefix")
        let read = try await session.call("range") { session.client.range(EtcdRangeRequest(.prefix("/kvod/")), $0) }
        #expect(read.count == 2 && read.kvs.map(\.keyText) == ["/kvod/a", "/kvod/b"])
        #expect(read.kvs.map(\.valueText) == ["one", #"{"x":[1,2]}"#])
        #expect(read.kvs.map(\.modRevision) == [first, second] && second == first + 1)
        #expect(read.kvs.allSatisfy { $0.version == 1 && $0.createRevision == $0.modRevision })
        let one = try await session.call("range of one key") { session.client.range(EtcdRangeRequest(.key("/kvod/a")), $0) }
        #expect(one.kvs.map(\.valueText) == ["one"] && one.header.revision == second + 1)
        let binary: [UInt8] = [0, 0xFF, 0x80, 10]
        _ = try await session.call("put of bytes") {
            session.client.put(EtcdPutRequest(key: Array("/kvod/bin".utf8), value: binary), $0)
        }
        let bytes = try await session.call("range of bytes") { session.client.range(EtcdRangeRequest(.key("/kvod/bin")), $0) }
        #expect(bytes.kvs.first?.value == binary)
    }

    @Test func txnAppliesWhenModRevisionStillMatchesAndRunsItsFailureBranchOnceItMoved() async throws {
        let cluster = try await EtcdCluster()
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let readAt = try await session.put("/kvod/doc", "v1")
        let guarded = { (value: String) in
            EtcdTxnRequest(compare: [.modRevision(of: "/kvod/doc", is: readAt)],
                           success: [.put(EtcdPutRequest("/kvod/doc", value)), .put(EtcdPutRequest("/kvod/log", value))],
                           failure: [.range(EtcdRangeRequest(.key("/kvod/doc")))])
        }
        let won = try await session.call("txn at the read revision") { session.client.txn(guarded("v2"), $0) }
        #expect(won.succeeded && won.responses.count == 2)
        #expect(won.header.revision == readAt + 1, "both puts in one revision")
        let lost = try await session.call("txn at a stale revision") { session.client.txn(guarded("v3"), $0) }
        #expect(!lost.succeeded)
        guard case .range(let current)? = lost.responses.first else {
            Issue.record("the failure branch's range is missing: \(lost.responses)")
            return
        }
        #expect(current.kvs.first?.valueText == "v2" && current.kvs.first?.modRevision == readAt + 1)
        #expect(lost.header.revision == readAt + 1, "a failed compare writes nothing")
        let absent = EtcdTxnRequest(compare: [EtcdCompare(.key("/kvod/new"), .version(0))],
                                    success: [.put(EtcdPutRequest("/kvod/new", "created"))])
        let created = try await session.call("create-if-absent") { session.client.txn(absent, $0) }
        let again = try await session.call("create-if-absent again") { session.client.txn(absent, $0) }
        #expect(created.succeeded && !again.succeeded)
    }

    @Test func leaderKilledTheClientsRequestsGoOnThroughAnotherMemberAfterTheElection() async throws {
        let cluster = try await EtcdCluster()
        let probe = try EtcdSession(endpoints: cluster.clientURLs)
        var leaderIndex: Int?
        var leaderID: UInt64 = 0
        for (index, url) in cluster.clientURLs.enumerated() {
            let status = try await probe.call("status of \(url)") { probe.client.status(of: url, $0) }
            if status.isLeader { (leaderIndex, leaderID) = (index, status.leader) }
        }
        let leader = try #require(leaderIndex, "no member says it is the leader")
        // The client starts on the leader, so its requests must move to another member.
        let others = cluster.clientURLs.indices.filter { $0 != leader }.map { cluster.clientURLs[$0] }
        let session = try EtcdSession(endpoints: [cluster.clientURLs[leader]] + others, requestTimeoutMilliseconds: 2_000)
        // Before the kill with the probe's patience: a loaded machine can take 2 s for one put.
        var acknowledged = [try await probe.put("/kvod/before", "1")]
        try await cluster.kill(member: leader)
        var failures: [EtcdError] = []
        try await waitUntil("a put succeeds after the election", timeout: 30) { () async throws -> Bool in
            switch try await session.answer("put during the election", { session.client.put(EtcdPutRequest("/kvod/after", "2"), $0) }) {
            case .success(let put): acknowledged.append(put.header.revision); return true
            case .failure(let error): failures.append(error); return false
            }
        }
        #expect(session.client.currentEndpoint != cluster.clientURLs[leader])
        for index in 0..<5 { acknowledged.append(try await session.put("/kvod/n\(index)", "\(index)")) }
        #expect(acknowledged == acknowledged.sorted() && Set(acknowledged).count == acknowledged.count)
        let read = try await session.call("range after the election") { session.client.range(EtcdRangeRequest(.prefix("/kvod/")), $0) }
        #expect(read.kvs.map(\.keyText).sorted() == ["/kvod/after", "/kvod/before"] + (0..<5).map { "/kvod/n\($0)" })
        let status = try await session.call("status of the new leader's follower") { session.client.status(of: others[0], $0) }
        #expect(status.leader != 0 && status.leader != leaderID, "a new leader was elected")
        #expect(failures.allSatisfy { if case .unreachable = $0 { true } else if case .server = $0 { true } else { false } },
                "\(failures)")
    }
}
