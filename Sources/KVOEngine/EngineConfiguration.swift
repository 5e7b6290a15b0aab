/// The engine's limits and identity, with defaults that suit one host.
public struct EngineConfiguration: Sendable {
    /// Reported by `info`: the daemon's version, from its nearest release tag.
    public var version: String
    /// Reported by `info`: the commit the daemon was built from.
    public var commit: String
    /// The most observations one client may hold (`--max-observations-per-connection`);
    /// more is `limit_exceeded`.
    public var maxObservationsPerClient: Int
    /// How many recent changes, and how many bytes of them, are kept for
    /// `observe` with `since` (`--history`, `--history-bytes`).
    public var historyLimits: HistoryLimits
    /// The most bytes kvod's memory account (``Engine/memoryEstimate``) may
    /// reach through new observations and writes that grow the documents
    /// (`--max-memory`); 0: no limit.
    public var maxMemory: Int
    /// Who may read and write what; nil: every client may everything.
    public var accessPolicy: AccessPolicy?
    /// The wall clock TTL deadlines are kept in (seconds since 1970); tests set their own.
    public var wallClock: @Sendable () -> Double = wallClockNow
    /// The monotonic clock throttle intervals are measured on, in milliseconds; tests set their own.
    public var throttleClock: @Sendable () -> UInt64 = monotonicMilliseconds

    /// `--max-observations-per-connection`'s default: about 25 MiB of
    /// observations at ``ResourceAccount/observationBytes`` each.
    public static let defaultMaxObservationsPerClient = 100_000

    public init(version: String = "unknown", commit: String = "unknown",
                maxObservationsPerClient: Int = EngineConfiguration.defaultMaxObservationsPerClient,
                historyCapacity: Int = 100_000, historyBytes: Int = HistoryLimits.defaultMaxBytes,
                maxMemory: Int = 0, accessPolicy: AccessPolicy? = nil) {
        self.version = version
        self.commit = commit
        self.maxObservationsPerClient = maxObservationsPerClient
        self.historyLimits = HistoryLimits(maxChanges: historyCapacity, maxBytes: historyBytes)
        self.maxMemory = maxMemory
        self.accessPolicy = accessPolicy
    }

    /// How many recent changes are kept for `observe` with `since`.
    public var historyCapacity: Int {
        get { historyLimits.maxChanges }
        set { historyLimits.maxChanges = newValue }
    }
}
