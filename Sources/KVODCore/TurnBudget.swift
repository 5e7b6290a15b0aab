/// How much of one loop turn a single connection may take: at most
/// ``maxRequests`` request lines and ``maxBytes`` bytes of them. A connection
/// that reaches either stops being read until the next turn (its lines of
/// the read under way wait, in order, in its ``DeferredFrames``), so a client
/// that pipelines a large burst holds the loop for one budget, not for the
/// whole burst, and every other client is served in between. Redis does the
/// same by reading at most 16 KiB from a client per event.
public struct TurnBudget: Sendable, Equatable {
    /// Request lines one connection may have handled in one loop turn.
    public static let maxRequests = 512
    /// Bytes of request lines one connection may have handled in one loop turn.
    public static let maxBytes = 64 << 10

    private var turn: UInt64 = 0
    private var requests = 0
    private var bytes = 0

    public init() {}

    /// Counts one line of `count` bytes handled in loop turn `now`.
    public mutating func spend(bytes count: Int, turn now: UInt64) {
        if now != turn {
            turn = now
            requests = 0
            bytes = 0
        }
        requests += 1
        bytes += count
    }

    /// Whether the connection has used up turn `now`'s budget.
    public func isSpent(turn now: UInt64) -> Bool {
        now == turn && (requests >= Self.maxRequests || bytes >= Self.maxBytes)
    }
}
