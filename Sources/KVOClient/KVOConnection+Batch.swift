import KVOValues
import KVOProtocol

/// Several change ops as one (`batch`, docs/PROTOCOL.md).
extension KVOConnection {
    /// The most ops one batch may carry (more is `limit_exceeded`).
    public static let maximumBatchCount = 10_000

    /// Applies `operations` as if one after another, each seeing what the
    /// earlier ones left, all or none: if one fails (a condition, a missing
    /// array, …), nothing is applied, nobody is notified, and the error is
    /// that op's, with its position in ``KVOClientError/index``. Observers
    /// get the batch's events contiguously, and no other client sees half of it.
    ///
    /// ```swift
    /// let result = try await connection.batch([
    ///     .delete("queue/pending", "job"),
    ///     .set("queue/running", "job", to: 1),
    /// ])
    /// ```
    @discardableResult
    public func batch(_ operations: [WriteOperation]) async throws(KVOClientError) -> BatchResult {
        try await request(Self.batchLine(operations), "batch") { BatchResult($0, count: operations.count) }
    }

    /// The `batch` request carrying `operations`.
    static func batchLine(_ operations: [WriteOperation]) -> RequestEncoder {
        var line = RequestEncoder(op: .batch)
        var ops: [UInt8] = [UInt8(ascii: "[")]
        for (position, operation) in operations.enumerated() {
            if position > 0 { ops.append(UInt8(ascii: ",")) }
            ops += operation.line.jsonObject
        }
        ops.append(UInt8(ascii: "]"))
        line.json(.ops, ops)
        return line
    }
}

/// What a ``KVOConnection/batch(_:)`` changed.
public struct BatchResult: Sendable, Hashable {
    /// The seq of the batch's last change (the current seq when no op changed anything).
    public var seq: UInt64
    /// Each op's seq, in order, or nil for an op that changed nothing (a delete of nothing).
    public var seqs: [UInt64?]
    /// Each ``WriteOperation/add(_:_:by:ifModSeq:ifValue:ttl:)``'s sum, in order, or nil for an op
    /// that is no add.
    public var sums: [Int?]

    init?(_ reply: JSONObject, count: Int) {
        guard let seq = reply.unsigned(.seq), case .array(let list)? = reply[.seqs], list.count == count,
              let seqs = Self.integers(list, as: UInt64.self)
        else { return nil }
        self.seq = seq
        self.seqs = seqs
        // `values` comes only with an add among the ops.
        guard case .array(let values)? = reply[.values] else {
            sums = Array(repeating: nil, count: count)
            return
        }
        guard values.count == count, let sums = Self.integers(values, as: Int.self) else { return nil }
        self.sums = sums
    }

    /// Each element as an integer, nil for `null`; nil for a list with anything else.
    private static func integers<T: FixedWidthInteger>(_ list: [JSONValue], as type: T.Type) -> [T?]? {
        var integers: [T?] = []
        for element in list {
            switch element {
            case .null: integers.append(nil)
            case .number(let number): guard let value = T(number.literal) else { return nil }; integers.append(value)
            default: return nil
            }
        }
        return integers
    }
}
