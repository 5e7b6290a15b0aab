/// How many requests the engine answered, by `op`: what the `metrics` op
/// reports. One integer increment per request on the loop's thread.
public struct RequestCounts: Sendable, Equatable {
    /// By the op's position in ``Operation/names``.
    private var byOp = [Int](repeating: 0, count: Operation.names.count)
    /// Lines that were not a request: not JSON, no known `op`, a bad field, too long.
    public var invalid = 0

    public init() {}

    /// How many requests of the op named `name` (one of ``Operation/names``) were answered.
    public func count(of name: String) -> Int {
        Operation.names.firstIndex(of: name).map { byOp[$0] } ?? 0
    }

    mutating func count(_ operation: Operation) {
        byOp[operation.nameIndex] += 1
    }
}

extension Operation {
    /// The position of this op's name in ``names``.
    var nameIndex: Int {
        switch self {
        case .set: 0
        case .get: 1
        case .delete: 2
        case .insert: 3
        case .remove: 4
        case .replace: 5
        case .observe: 6
        case .unobserve: 7
        case .unobserveAll: 8
        case .ping: 9
        case .info: 10
        case .observations: 11
        case .list: 12
        case .batch: 13
        case .metrics: 14
        case .ack: 15
        case .add: 16
        }
    }
}
