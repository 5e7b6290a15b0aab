import KVOEtcd

/// What the replica asks of etcd (docs/CLUSTER.md), in etcd v3's own terms
/// (KVOEtcd's requests and answers): the daemon gives it KVOEtcd's client on
/// its loop (`EtcdClient`), the tests one in memory that loses, compacts and
/// stalls on demand. Every completion runs on the caller's loop, later, never
/// from within the call.
public protocol ClusterBackend: AnyObject {
    associatedtype Request: ClusterRequest
    associatedtype Watch: ClusterWatch
    /// The members' client URLs, in the order they are tried.
    var endpoints: [String] { get }
    /// The endpoint the next request goes to.
    var currentEndpoint: String { get }

    /// A range read (linearizable): the snapshot after a compaction, the epoch key.
    func range(_ request: EtcdRangeRequest, _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void)
    /// A range read at `endpoint` that must answer within `timeoutMilliseconds`,
    /// not tried elsewhere: whether that member, and through it a leader, answers now.
    func probe(_ request: EtcdRangeRequest, at endpoint: String, timeoutMilliseconds: Int,
               _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void)
    /// A compare-and-write; `idempotent`: one that may be sent again when its
    /// outcome is unknown. The handle tells where it went and lets the caller stop waiting.
    @discardableResult
    func txn(_ request: EtcdTxnRequest, idempotent: Bool,
             _ done: @escaping (Result<EtcdTxnResponse, EtcdError>) -> Void) -> Request
    /// What `endpoint` (nil: the current one) says of itself, its leader among it.
    func status(of endpoint: String?, timeoutMilliseconds: Int?, _ done: @escaping (Result<EtcdStatus, EtcdError>) -> Void)
    /// Requests and watches from now go to another endpoint than `endpoint`.
    func avoid(_ endpoint: String)

    /// Starts a watch; its updates go to `handler` until it ends or is cancelled.
    func watch(_ request: EtcdWatchRequest, _ handler: @escaping (EtcdWatchUpdate) -> Void) -> Watch

    /// A lease that ends `ttl` seconds after its last renewal.
    func grantLease(ttl: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void)
    /// Renews `lease` once; one that no longer exists answers a ttl of 0 or less.
    func keepAlive(lease: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void)
    /// Ends `lease` now: etcd deletes its keys in one revision.
    func revokeLease(_ lease: Int64, _ done: @escaping (Result<EtcdResponseHeader, EtcdError>) -> Void)
    /// The replica is closing with these revokes on their way: sends them
    /// again, and waits for them a short while, so that those values go now.
    func revokeWhileClosing(_ leases: Set<Int64>)
}

/// A request in flight (a `Txn`) that its caller may stop waiting for.
public protocol ClusterRequest: AnyObject {
    /// The member it went to.
    var endpoint: String { get }
    /// Whether its completion was told.
    var isFinished: Bool { get }
    /// Tells the completion now that the request failed after it was sent
    /// (it may still be applied); nothing when it is finished.
    func abandon(because reason: String)
}

/// One watch in place.
public protocol ClusterWatch: AnyObject {
    /// The member it reads from.
    var endpoint: String { get }
    /// Whether its stream is left unread (``pauseReceiving()``).
    var isPaused: Bool { get }
    /// Leaves the stream unread: etcd holds what follows, nothing is lost.
    func pauseReceiving()
    func resumeReceiving()
    /// Stops the watch; its handler hears nothing more.
    func cancel()
}
