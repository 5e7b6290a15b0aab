import KVOEtcd
import KVOTestSupport
import Testing

/// `EtcdTxnRequest`'s measure against etcd's own limits (`--max-request-bytes`,
/// `--max-txn-ops`), which kvod checks before it sends (docs/CLUSTER.md).
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct EtcdTxnLimitTests {
    /// kvod's shape of `Txn`: a compare, a document and its record.
    static func txn(value length: Int) -> EtcdTxnRequest {
        EtcdTxnRequest(compare: [.modRevision(of: "/kvod/o/doc", is: 0)], success: [
            .put(EtcdPutRequest("/kvod/o/doc", String(repeating: "v", count: length))),
            .put(EtcdPutRequest("/kvod/c/doc", #"{"op":"set","path":[],"kind":"setting","indexes":[]}"#)),
        ])
    }

    /// The smallest such `Txn` that measures at least `bytes`.
    static func txn(measuring bytes: Int) -> EtcdTxnRequest {
        var length = 0
        while txn(value: length).proposalBytes < bytes { length += 1 }
        return txn(value: length)
    }

    @Test func aTxnMeasuredAtTheRequestLimitIsTakenAndOneAFewBytesOverIsRefused() async throws {
        let cluster = try await EtcdCluster(size: 1, arguments: ["--max-request-bytes", "4096"])
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        let atLimit = Self.txn(measuring: 4096)
        #expect(atLimit.proposalBytes == 4096)
        let taken = try await session.call("a txn measured at the limit") { session.client.txn(atLimit, $0) }
        #expect(taken.succeeded)
        // The measure is an upper bound, and a tight one: 32 bytes over it, etcd refuses.
        let over = Self.txn(measuring: 4096 + 32)
        let refused = try await session.answer("a txn measured 32 bytes over") { session.client.txn(over, $0) }
        guard case .failure(.server(_, let message)) = refused else {
            Issue.record("etcd took a txn over its limit: \(refused)")
            return
        }
        #expect(message.contains("too large"), "\(message)")
    }

    @Test func aTxnCountsItsLargerBranchOrItsComparesAsEtcdDoes() async throws {
        let cluster = try await EtcdCluster(size: 1, arguments: ["--max-txn-ops", "4"])
        let session = try EtcdSession(endpoints: cluster.clientURLs)
        func puts(_ count: Int) -> EtcdTxnRequest {
            EtcdTxnRequest(compare: [], success: (0..<count).map { .put(EtcdPutRequest("/kvod/k\($0)", "v")) })
        }
        #expect(puts(4).operationCount == 4 && puts(5).operationCount == 5)
        let taken = try await session.call("four puts") { session.client.txn(puts(4), $0) }
        #expect(taken.succeeded)
        let refused = try await session.answer("five puts") { session.client.txn(puts(5), $0) }
        guard case .failure(.server(_, let message)) = refused else {
            Issue.record("etcd took five operations over --max-txn-ops 4: \(refused)")
            return
        }
        #expect(message.contains("too many operations"), "\(message)")
    }
}
