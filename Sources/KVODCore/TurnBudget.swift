/// How much of one loop turn a single connection may take: at most
/// ``maxRequests`` request lines, ``maxBytes`` bytes of them and
/// ``maxNanoseconds`` of handling them. A connection that reaches any
/// stops being read until the next turn (its lines of
/// the read under way wait, in order, in its ``DeferredFrames``), so a client
/// that pipelines a large burst holds the loop for one budget, not for the
/// whole burst, and every other client is served in between. Redis does the
/// same by reading at most 16 KiB from a client per event. The time share is
/// for requests whose cost is not in their size (an aggregate's `get` passes
/// over a whole array): past it, one more such request waits a turn.
public struct TurnBudget: Sendable, Equatable {
    /// Request lines one connection may have handled in one loop turn.
    public static let maxRequests = 512
    /// Bytes of request lines one connection may have handled in one loop turn.
    public static let maxBytes = 64 << 10
    /// Time one connection's request lines may have taken in one loop turn.
    public static let maxNanoseconds: UInt64 = 10_000_000

    private var turn: UInt64 = 0
    private var requests = 0
    private var bytes = 0
    private var nanoseconds: UInt64 = 0

    public init() {}

    /// Counts one line of `count` bytes handled in loop turn `now`.
    public mutating func spend(bytes count: Int, turn now: UInt64) {
        if now != turn {
            turn = now
            requests = 0
            bytes = 0
            nanoseconds = 0
        }
        requests += 1
        bytes += count
    }

    /// Counts the time the line counted last took to handle (in turn `now`).
    public mutating func spend(nanoseconds count: UInt64, turn now: UInt64) {
        if now == turn { nanoseconds &+= count }
    }

    /// Whether the connection has used up turn `now`'s budget.
    public func isSpent(turn now: UInt64) -> Bool {
        now == turn && (requests >= Self.maxRequests || bytes >= Self.maxBytes || nanoseconds >= Self.maxNanoseconds)
    }
}
