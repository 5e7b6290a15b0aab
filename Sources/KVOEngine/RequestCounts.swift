import KVOProtocol

/// How many requests the engine answered, by `op`: what the `metrics` op
/// reports. One integer increment per request on the loop's thread.
public struct RequestCounts: Sendable, Equatable {
    /// By the op's ``KVOProtocol/Op/ordinal``.
    private var byOp = [Int](repeating: 0, count: Op.allCases.count)
    /// Lines that were not a request: not JSON, no known `op`, a bad field, too long.
    public var invalid = 0

    /// How many requests of the op named `name` were answered.
    public func count(of name: String) -> Int {
        Op(rawValue: name).map { byOp[$0.ordinal] } ?? 0
    }

    mutating func count(_ operation: Operation) {
        byOp[operation.op.ordinal] += 1
    }
}
