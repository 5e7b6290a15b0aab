/// The engine's limits and identity, with defaults that suit one host.
public struct EngineConfiguration: Sendable {
    /// Reported by `info`.
    public var version: String
    /// The most observations one client may hold; more is `limit_exceeded`.
    public var maxObservationsPerClient: Int
    /// How many recent changes are kept for `observe` with `since`.
    public var historyCapacity: Int
    /// Who may read and write what; nil: every client may everything.
    public var accessPolicy: AccessPolicy?
    /// The wall clock TTL deadlines are kept in (seconds since 1970); tests set their own.
    public var wallClock: @Sendable () -> Double = wallClockNow

    public init(version: String = kvodVersion, maxObservationsPerClient: Int = 1_000_000,
                historyCapacity: Int = 100_000, accessPolicy: AccessPolicy? = nil) {
        self.version = version
        self.maxObservationsPerClient = maxObservationsPerClient
        self.historyCapacity = historyCapacity
        self.accessPolicy = accessPolicy
    }
}

/// kvod's version, as `info` reports it.
public let kvodVersion = "0.1.0"
