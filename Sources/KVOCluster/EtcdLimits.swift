import KVOEngine
import KVOEtcd

/// etcd's limits on one request, as kvod is told the cluster's settings
/// (`--etcd-max-request-bytes`, `--etcd-max-txn-ops`): a change whose `Txn`
/// would pass them is refused by kvod before it is sent, naming the limit,
/// rather than by etcd after (docs/CLUSTER.md, "etcd's limits").
public struct EtcdLimits: Equatable, Sendable {
    /// etcd's `--max-request-bytes` default: 1.5 MiB.
    public static let defaultMaxRequestBytes = 1_572_864
    /// etcd's `--max-txn-ops` default.
    public static let defaultMaxTxnOps = 128
    /// A deletion's `Txn` deletes a document and puts its record: fewer operations allow nothing.
    public static let leastTxnOps = 2

    /// The largest `Txn` in bytes (`--etcd-max-request-bytes`).
    public var maxRequestBytes = Self.defaultMaxRequestBytes
    /// The most operations of one `Txn` (`--etcd-max-txn-ops`).
    public var maxTxnOps = Self.defaultMaxTxnOps

    /// The limits of a cluster set so; etcd's defaults unless told.
    public init(maxRequestBytes: Int = Self.defaultMaxRequestBytes, maxTxnOps: Int = Self.defaultMaxTxnOps) {
        self.maxRequestBytes = maxRequestBytes
        self.maxTxnOps = maxTxnOps
    }

    /// Why etcd would refuse `txn`, `what` being the request it carries (`this
    /// set`, `this batch`); nil when it is within both limits.
    func refusal(of txn: EtcdTxnRequest, _ what: String) -> KVOEngineError? {
        let operations = txn.operationCount
        if operations > maxTxnOps {
            return KVOEngineError(.limitExceeded, """
                \(what) would be an etcd Txn of \(operations) operations (a document, its change record inside, \
                per object it changes; a deletion and its record two), over etcd's --max-txn-ops (\(maxTxnOps); \
                kvod's --etcd-max-txn-ops); nothing changed
                """)
        }
        let bytes = txn.proposalBytes
        if bytes > maxRequestBytes {
            return KVOEngineError(.tooLarge, """
                \(what) would be an etcd Txn of \(bytes) bytes (the documents it changes, whole, and their change \
                records), over etcd's --max-request-bytes (\(maxRequestBytes); kvod's --etcd-max-request-bytes); \
                nothing changed
                """)
        }
        return nil
    }
}
