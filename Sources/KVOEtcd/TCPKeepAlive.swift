/// TCP keepalive on the client's connections: how long a peer gone without a
/// word (a cut link, a host powered off: no reset, no FIN) goes unnoticed.
///
/// The watch has no timeout of its own, and etcd may have nothing to send for
/// minutes, so without probes a watch over a dead link would seem alive for
/// ever and its kvod would never go stale (ClusterPartitionTests). The kernel
/// answers the probes, so a busy etcd does not look dead.
public struct TCPKeepAlive: Sendable {
    /// Silence before the first probe.
    public var idleSeconds: Int
    /// Between probes.
    public var intervalSeconds: Int
    /// Probes unanswered before the connection is given up (`TCP_KEEPCNT`).
    public var probes: Int

    public init(idleSeconds: Int = 2, intervalSeconds: Int = 1, probes: Int = 3) {
        self.idleSeconds = idleSeconds
        self.intervalSeconds = intervalSeconds
        self.probes = probes
    }
}
