/// The engine's limits and identity, with defaults that suit one host.
public struct EngineConfiguration: Sendable {
    /// Reported by `info`.
    public var version: String
    /// The most observations one client may hold; more is `limit_exceeded`.
    public var maxObservationsPerClient: Int
    /// How many recent changes are kept for `observe` with `since`.
    public var historyCapacity: Int

    public init(version: String = kvodVersion, maxObservationsPerClient: Int = 1_000_000,
                historyCapacity: Int = 100_000) {
        self.version = version
        self.maxObservationsPerClient = maxObservationsPerClient
        self.historyCapacity = historyCapacity
    }
}

/// kvod's version, as `info` reports it.
public let kvodVersion = "0.1.0"
