#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// How long a value set by `set` lives (issue 14): as long as the connection
/// that set it (`ephemeral`), or until a deadline (`ttl`), or both.
public struct ValueLifetime: Sendable, Equatable {
    /// The value goes when the connection that set it closes.
    public var ephemeral = false
    /// Seconds from the set until the value goes; nil: no deadline.
    public var ttl: Double?

    /// The longest `ttl`, in seconds: a year.
    public static let maxTTL: Double = 31_536_000
}

/// Why kvod made a change itself: events of it carry `"cause":…`.
public enum ChangeCause: String, Sendable {
    /// The value's owner connection closed (or was gone when kvod started).
    case disconnect
    /// The value's `ttl` passed.
    case ttl
}

/// The hold a set's lifetime puts on a value: kept with the change that
/// made it (so the data directory can keep it too) and in the value's
/// object while it lasts.
public struct Lease: Sendable, Equatable {
    /// The client that owns an ephemeral value; nil for one that is not. An
    /// ephemeral lease read from disk is owned by a connection of a previous
    /// run (``LeaseTable/previousRun``).
    public var owner: Int?
    /// Whether the value is ephemeral (on disk: its owner is gone).
    public var ephemeral: Bool
    /// When the value goes, in seconds since 1970 (wall clock: it survives restarts).
    public var deadline: Double?
    /// Over etcd: the revision of the set that leased the value. Its leased
    /// key in etcd has that `mod_revision`, so when that key goes the engine
    /// can tell whether the value is still the one it held (docs/CLUSTER.md).
    public var replicatedAt: UInt64?

    public init(owner: Int?, ephemeral: Bool, deadline: Double?, replicatedAt: UInt64? = nil) {
        self.owner = owner
        self.ephemeral = ephemeral
        self.deadline = deadline
        self.replicatedAt = replicatedAt
    }
}

/// The wall clock, in seconds since 1970: what TTL deadlines are kept in.
public func wallClockNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
