import KVOCluster
import KVOEtcd

/// The replica's ``ClusterBackend``: KVOEtcd's client driven by the daemon's
/// libuv loop (``UVEtcdDriver``). Loop-confined.
final class EtcdBackend: ClusterBackend {
    let client: EtcdClient
    private let driver: UVEtcdDriver

    init(_ configuration: EtcdClient.Configuration, loop: UVLoop) throws(DaemonError) {
        driver = UVEtcdDriver(loop: loop)
        do {
            client = try EtcdClient(configuration, driver: driver)
        } catch {
            throw .cannotReachEtcd("\(error)")
        }
        driver.client = client
    }

    var endpoints: [String] { client.configuration.endpoints }
    var currentEndpoint: String { client.currentEndpoint }

    func range(_ request: EtcdRangeRequest, _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        client.range(request, done)
    }

    func probe(_ request: EtcdRangeRequest, at endpoint: String, timeoutMilliseconds: Int,
               _ done: @escaping (Result<EtcdRangeResponse, EtcdError>) -> Void) {
        client.probe(request, at: endpoint, timeoutMilliseconds: timeoutMilliseconds, done)
    }

    @discardableResult
    func txn(_ request: EtcdTxnRequest, idempotent: Bool,
             _ done: @escaping (Result<EtcdTxnResponse, EtcdError>) -> Void) -> any ClusterRequest {
        client.txn(request, idempotent: idempotent, done)
    }

    func status(of endpoint: String, timeoutMilliseconds: Int, _ done: @escaping (Result<EtcdStatus, EtcdError>) -> Void) {
        client.status(of: endpoint, timeoutMilliseconds: timeoutMilliseconds, done)
    }

    func avoid(_ endpoint: String) { client.avoid(endpoint) }

    func watch(_ request: EtcdWatchRequest, _ handler: @escaping (EtcdWatchUpdate) -> Void) -> any ClusterWatch {
        client.watch(request, handler)
    }

    func grantLease(ttl: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        client.grantLease(ttl: ttl, done)
    }

    func keepAlive(lease: Int64, _ done: @escaping (Result<EtcdLease, EtcdError>) -> Void) {
        client.keepAlive(lease: lease, done)
    }

    func revokeLease(_ lease: Int64, _ done: @escaping (Result<EtcdResponseHeader, EtcdError>) -> Void) {
        client.revokeLease(lease, done)
    }

    /// The loop's client stops with kvod: the revokes go again on a client of
    /// their own, on a poll(2) loop, and are waited for a second at most.
    func revokeWhileClosing(_ leases: Set<Int64>) {
        var configuration = client.configuration
        configuration.requestTimeoutMilliseconds = 1_000
        let driver = EtcdPollLoop()
        guard let stopping = try? EtcdClient(configuration, driver: driver) else { return }
        driver.client = stopping
        var left = leases.count
        for lease in leases { stopping.revokeLease(lease) { _ in left -= 1 } }
        let deadline = ContinuousClock.now + .seconds(1)
        while left > 0, ContinuousClock.now < deadline { driver.turn(maxWaitMilliseconds: 50) }
    }

    func close() { driver.close() }
}

/// KVOEtcd's handles are the replica's as they are.
extension EtcdRequest: ClusterRequest {}
extension EtcdWatch: ClusterWatch {}
