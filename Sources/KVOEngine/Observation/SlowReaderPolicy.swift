/// What kvod does with a client that reads slower than it is written to,
/// decided in one place (docs/PROTOCOL.md, "Slow readers"; Redis's
/// `client-output-buffer-limit`):
///
/// - **Congestion.** Over the hard limit at once, or over the soft limit for
///   longer than its period, the client is congested.
/// - **Events while congested.** Each observation's ``ObservationPolicy``:
///   `coalesce` holds its latest event (``HeldEvents``; a prior event is
///   dropped, the change after it is held), `disconnect` ends the client.
/// - **Requests while replies pile up.** Replies are never held nor dropped:
///   past the hard limit the client's requests are not read until they drain.
///
/// One value per client, pure: the daemon reports what waits for the client
/// and the loop's time, the engine asks it about each event.
public struct SlowReaderPolicy: Sendable, Equatable {
    /// What becomes of one event while its client is congested.
    public enum EventFate: Sendable, Equatable {
        /// Kept as the observation's latest event, sent with `"coalesced":N` once the client drains.
        case hold
        /// Not kept: a prior event, which the held change event stands for.
        case drop
        /// The client is closed.
        case disconnect
    }

    public let limits: OutputLimits
    /// Loop time (ms) since which queued output has stayed over the soft limit.
    public private(set) var overSoftLimitSince: UInt64?

    public init(limits: OutputLimits) {
        self.limits = limits
    }

    /// The fate of an event (`isPrior`: a prior event) of an observation
    /// with `policy` while its client is congested.
    public static func fate(of policy: ObservationPolicy, isPrior: Bool) -> EventFate {
        switch policy {
        case .coalesce: isPrior ? .drop : .hold
        case .disconnect: .disconnect
        }
    }

    /// Whether `outputBytes` of output exceed `allowance` (nil: no limit), so
    /// that the client becomes congested.
    @inline(__always)
    public static func overflows(_ outputBytes: Int, allowance: Int?) -> Bool {
        guard let allowance else { return false }
        return outputBytes > allowance
    }

    /// How much output the engine may produce while `queuedBytes` already
    /// wait beyond it (in the socket, or for a commit).
    public func allowance(queuedBytes: Int) -> Int {
        max(0, limits.hardBytes - queuedBytes)
    }

    /// Whether the client's requests are read while `pendingBytes` of output
    /// (produced, queued or held) wait for it.
    public func readsRequests(pendingBytes: Int) -> Bool {
        pendingBytes <= limits.hardBytes
    }

    /// The daemon wrote and `queuedBytes` still wait at loop time `now`
    /// (milliseconds). Returns whether the client is congested because they
    /// stayed over the soft limit for its period.
    public mutating func noteQueued(_ queuedBytes: Int, now: UInt64) -> Bool {
        guard queuedBytes > limits.softBytes else {
            overSoftLimitSince = nil
            return false
        }
        guard let since = overSoftLimitSince else {
            overSoftLimitSince = now
            return false
        }
        return now - since >= limits.softMilliseconds
    }
}
