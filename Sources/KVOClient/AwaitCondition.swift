import KVOProtocol

/// What a write waits for before it returns (docs/PROTOCOL.md,
/// "Acknowledgements and `await`"): its change is applied and notified at
/// once either way; only the reply waits.
///
/// ```swift
/// // A configuration roll-out: returns once every agent has acted on version 42.
/// let receipt = try await connection.perform(.set("config", "version", to: 42),
///                                            await: .acknowledged(timeout: .seconds(30)))
/// print("\(receipt.acknowledged) of \(receipt.observers) agents")
/// ```
///
/// When the timeout passes first, the call throws
/// `KVOClientError.Code.timeout` carrying the counts
/// (``KVOClientError/observers``, ``KVOClientError/acknowledged``); the change stays applied.
public struct AwaitCondition: Sendable, Hashable {
    /// `"written"` or `"acknowledged"`, as the wire spells it.
    let name: String
    /// How long kvod waits at most (whole milliseconds, rounded up; 1 ms to 1 hour).
    public let timeout: Duration

    /// kvod's default timeout: 5 seconds.
    public static let defaultTimeout: Duration = .seconds(5)

    /// Until every event of the change is in the kernel socket buffer of
    /// every matching observer's connection (or that connection closed, or
    /// the event was folded: a throttle, a slow reader).
    public static let written = AwaitCondition(name: "written", timeout: defaultTimeout)

    /// Until every matching observation that acknowledges
    /// (``DeliveryOptions/acknowledges``), on another connection, has
    /// acknowledged the change (or its connection closed).
    public static let acknowledged = AwaitCondition(name: "acknowledged", timeout: defaultTimeout)

    /// `written`, waiting at most `timeout`.
    public static func written(timeout: Duration) -> AwaitCondition {
        AwaitCondition(name: "written", timeout: timeout)
    }

    /// `acknowledged`, waiting at most `timeout`.
    public static func acknowledged(timeout: Duration) -> AwaitCondition {
        AwaitCondition(name: "acknowledged", timeout: timeout)
    }

    /// The timeout as kvod takes it: whole milliseconds, rounded up, kept in
    /// range of the wire's integers so that kvod names the limit.
    var timeoutMilliseconds: Int { timeout.wholeMillisecondsRoundedUp }

    /// Adds `await` and `awaitTimeout` to a change request.
    func addFields(to line: inout RequestEncoder) {
        line.string(.await, name)
        line.integer(.awaitTimeout, timeoutMilliseconds)
    }
}

/// What a write with ``AwaitCondition`` learned: its seq, and how many
/// observers it waited for and how many were satisfied.
public struct AwaitedWrite: Sendable, Hashable {
    /// The change's seq (a batch's: its last change's).
    public var seq: UInt64
    /// For a batch, each op's seq, or nil for an op that changed nothing; nil for a single change.
    public var seqs: [UInt64?]?
    /// The matching observations waited for: for `AwaitCondition.written`
    /// every one the change was due to reach, for `AwaitCondition.acknowledged`
    /// those that acknowledge (on other connections).
    public var observers: Int
    /// How many of ``observers`` were written to or acknowledged; fewer when
    /// some went away (or fell behind) meanwhile.
    public var acknowledged: Int

    /// Whether every observer waited for was satisfied.
    public var isComplete: Bool { acknowledged == observers }
}
