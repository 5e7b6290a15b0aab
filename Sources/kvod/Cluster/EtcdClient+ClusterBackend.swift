import KVOCluster
import KVOEtcd

/// KVOEtcd's client is the replica's ``ClusterBackend``, driven by the daemon's
/// libuv loop (``UVEtcdDriver``), and its handles are the replica's as they are.
extension EtcdClient: ClusterBackend {
    public var endpoints: [String] { configuration.endpoints }

    /// The loop's client stops with kvod: the revokes go again on a client of
    /// their own, on a poll(2) loop, and are waited for a second at most.
    public func revokeWhileClosing(_ leases: Set<Int64>) {
        var configuration = configuration
        configuration.requestTimeoutMilliseconds = 1_000
        let driver = EtcdPollLoop()
        guard let stopping = try? EtcdClient(configuration, driver: driver) else { return }
        driver.client = stopping
        var left = leases.count
        for lease in leases { stopping.revokeLease(lease) { _ in left -= 1 } }
        let deadline = ContinuousClock.now + .seconds(1)
        while left > 0, ContinuousClock.now < deadline { driver.turn(maxWaitMilliseconds: 50) }
    }
}

extension EtcdRequest: ClusterRequest {}
extension EtcdWatch: ClusterWatch {}
