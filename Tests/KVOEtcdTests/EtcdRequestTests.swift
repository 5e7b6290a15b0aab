import KVOEtcd
import KVOTestSupport
import Testing

/// ``EtcdRequest``: a `Txn` its caller stops waiting for (issue 35 item 5).
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct EtcdRequestTests {
    @Test func anAbandonedTxnToAStoppedMemberIsToldAtOnceAsMaybeAppliedAndNeverAgain() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        _ = try await session.put("/kvod/before", "1")
        cluster.pause(member: 0)
        defer { cluster.resume(member: 0) }
        var outcomes: [Result<EtcdTxnResponse, EtcdError>] = []
        let request = session.client.txn(EtcdTxnRequest(compare: [], success: [.put(EtcdPutRequest("/kvod/k", "v"))])) {
            outcomes.append($0)
        }
        #expect(request.endpoint == cluster.clientURLs[0] && !request.isFinished)
        // The member is stopped: nothing answers, however long the loop turns.
        try await session.turn(until: "the loop has turned", timeout: 5) { session.client.activeTransfers == 1 }
        #expect(outcomes.isEmpty)
        request.abandon(because: "a test gave up")
        let expected = EtcdError.unreachable(endpoint: cluster.clientURLs[0], detail: "abandoned: a test gave up",
                                             mayHaveApplied: true)
        #expect(outcomes.count == 1 && outcomes.first.map { if case .failure(expected) = $0 { true } else { false } } == true,
                "\(outcomes)")
        #expect(request.isFinished && session.client.activeTransfers == 0)
        request.abandon(because: "twice")
        cluster.resume(member: 0)
        _ = try await session.put("/kvod/after", "2")
        #expect(outcomes.count == 1, "told once: \(outcomes)")
    }
}
