/// The engine's limits and identity, with defaults that suit one host.
public struct EngineConfiguration: Sendable {
    /// Reported by `info`.
    public var version: String
    /// The most observations one client may hold; more is `limit_exceeded`.
    public var maxObservationsPerClient: Int

    public init(version: String = kvodVersion, maxObservationsPerClient: Int = 1_000_000) {
        self.version = version
        self.maxObservationsPerClient = maxObservationsPerClient
    }
}

/// kvod's version, as `info` reports it.
public let kvodVersion = "0.1.0"
