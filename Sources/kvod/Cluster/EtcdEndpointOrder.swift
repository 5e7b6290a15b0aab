import KVOEtcd

/// Which endpoint kvod talks to first: the first of `--etcd` that answers.
/// Every startup read and the run-time client begin with the configuration's
/// first endpoint, so a hung one (a stopped member: its kernel takes the
/// connection, nothing answers) cost each of them a request timeout, and
/// the first change after start was sent there too.
enum EtcdEndpointOrder {
    /// How long an endpoint may take to say its status before the next is tried.
    static let probeMilliseconds = 1_000

    /// `configuration` with its endpoints rotated so that the first that
    /// answers a status request leads; unchanged when none answers (the
    /// reads that follow then say why).
    static func answeringFirst(_ configuration: EtcdClient.Configuration) throws(DaemonError) -> EtcdClient.Configuration {
        guard configuration.endpoints.count > 1 else { return configuration }
        var probing = configuration
        probing.requestTimeoutMilliseconds = probeMilliseconds
        for (index, endpoint) in configuration.endpoints.enumerated() {
            guard case .success = try EtcdStartupCall.run(probing, { $0.status(of: endpoint, $1) }) else { continue }
            var ordered = configuration
            ordered.endpoints = Array(configuration.endpoints[index...] + configuration.endpoints[..<index])
            return ordered
        }
        return configuration
    }
}
