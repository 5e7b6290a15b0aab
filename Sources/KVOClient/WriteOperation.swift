import KVOValues
import KVOProtocol

/// One change op: what ``KVOConnection``'s write calls send, and what a
/// ``KVOConnection/batch(_:)`` carries (docs/PROTOCOL.md, "Atomic and ephemeral state").
///
/// Every op takes the two conditions: `ifModSeq` (apply only if the key
/// path's modSeq is that; `0`: only if nothing is there) and `ifValue`
/// (apply only if the current value equals that as JSON). When one fails,
/// nothing changes and the call throws
/// `KVOClientError.Code.preconditionFailed` with the current
/// ``KVOClientError/modSeq``.
///
/// ```swift
/// try await connection.batch([
///     .remove("queue", "pending", at: [0], ifValue: ["job1"]),
///     .insert("queue", "running", ["job1"]),
/// ])
/// ```
public struct WriteOperation: Sendable {
    var line: RequestEncoder

    private init(_ op: Op, _ object: String, _ keyPath: String?, ifModSeq: UInt64?, ifValue: JSONValue?) {
        line = RequestEncoder(op: op, object: object, keyPath: keyPath)
        if let ifModSeq { line.integer(.ifModSeq, ifModSeq) }
        if let ifValue { line.value(.ifValue, ifValue) }
    }

    /// Sets the value at `keyPath` (nil: the whole document, which `value`
    /// must then be a JSON object for), creating missing intermediate objects.
    ///
    /// - Parameters:
    ///   - object: the object's name.
    ///   - keyPath: where in the document; nil for the whole document.
    ///   - value: the JSON value, sent exactly as given.
    ///   - ifModSeq: apply only if the key path's modSeq is this (`0`: only if nothing is there).
    ///   - ifValue: apply only if the current value equals this JSON.
    ///   - ephemeral: the value belongs to this connection: kvod deletes it
    ///     (``ChangeCause/disconnect``) when the connection closes, for any reason.
    ///   - ttl: kvod deletes the value (``ChangeCause/ttl``) this long after the set,
    ///     unless a later change sets or deletes it first; at most a year.
    public static func set(_ object: String, _ keyPath: String?, to value: JSONValue,
                           ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil,
                           ephemeral: Bool = false, ttl: Duration? = nil) -> WriteOperation {
        set(object, keyPath, encoded: value.jsonBytes, ifModSeq: ifModSeq, ifValue: ifValue,
            ephemeral: ephemeral, ttl: ttl)
    }

    /// The same set with an `Encodable` value, encoded by Foundation's `JSONEncoder`.
    ///
    /// Disfavoured, so that a literal (`to: ["cmd": "backup"]`, `to: 5`) is a
    /// ``JSONValue`` and the op needs no `try`: a batch's list of ops is written
    /// without `as JSONValue`. A struct, or a variable of a Swift type, still comes here.
    @_disfavoredOverload
    public static func set(_ object: String, _ keyPath: String?, to value: some Encodable,
                           ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil,
                           ephemeral: Bool = false, ttl: Duration? = nil) throws(KVOClientError) -> WriteOperation {
        set(object, keyPath, encoded: try JSONCoding.encode(value), ifModSeq: ifModSeq, ifValue: ifValue,
            ephemeral: ephemeral, ttl: ttl)
    }

    static func set(_ object: String, _ keyPath: String?, encoded: [UInt8], ifModSeq: UInt64?, ifValue: JSONValue?,
                    ephemeral: Bool, ttl: Duration?) -> WriteOperation {
        var operation = WriteOperation(.set, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
        operation.line.json(.value, encoded)
        if ephemeral { operation.line.bool(.ephemeral, true) }
        if let ttl { operation.line.json(.ttl, Self.seconds(ttl).utf8) }
        return operation
    }

    /// Deletes the value at `keyPath`, or the whole object when `keyPath` is nil;
    /// deleting what is not there changes nothing.
    public static func delete(_ object: String, _ keyPath: String? = nil,
                              ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) -> WriteOperation {
        WriteOperation(.delete, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
    }

    /// Inserts `values` into the array at `keyPath` (created if missing) at
    /// `index`, or appends them when `index` is nil.
    public static func insert(_ object: String, _ keyPath: String, _ values: [JSONValue], at index: Int? = nil,
                              ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) -> WriteOperation {
        insert(object, keyPath, encoded: JSONValue.array(values).jsonBytes, at: index,
               ifModSeq: ifModSeq, ifValue: ifValue)
    }

    static func insert(_ object: String, _ keyPath: String, encoded: [UInt8], at index: Int?,
                       ifModSeq: UInt64?, ifValue: JSONValue?) -> WriteOperation {
        var operation = WriteOperation(.insert, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
        if let index { operation.line.integer(.index, index) }
        operation.line.json(.values, encoded)
        return operation
    }

    /// Removes the elements at `indexes` (positions before the change) from the array at `keyPath`.
    public static func remove(_ object: String, _ keyPath: String, at indexes: [Int],
                              ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) -> WriteOperation {
        var operation = WriteOperation(.remove, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
        operation.line.integers(.indexes, indexes)
        return operation
    }

    /// Replaces the elements at `indexes` by `values`, pairwise.
    public static func replace(_ object: String, _ keyPath: String, at indexes: [Int], with values: [JSONValue],
                               ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil) -> WriteOperation {
        replace(object, keyPath, at: indexes, encoded: JSONValue.array(values).jsonBytes,
                ifModSeq: ifModSeq, ifValue: ifValue)
    }

    static func replace(_ object: String, _ keyPath: String, at indexes: [Int], encoded: [UInt8],
                        ifModSeq: UInt64?, ifValue: JSONValue?) -> WriteOperation {
        var operation = WriteOperation(.replace, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
        operation.line.integers(.indexes, indexes)
        operation.line.json(.values, encoded)
        return operation
    }

    /// Adds `amount` to the integer at `keyPath` (nothing there counts as 0;
    /// missing objects on the way are made, as by a set), in one change
    /// whose events tell the old value and the sum. The value there and the
    /// sum must be integers within ±2^53, else
    /// `KVOClientError.Code.badRequest` and nothing changes.
    ///
    /// - Parameters:
    ///   - object: the object's name.
    ///   - keyPath: where in the document.
    ///   - amount: the integer to add, negative to subtract.
    ///   - ifModSeq: apply only if the key path's modSeq is this (`0`: only if nothing is there).
    ///   - ifValue: apply only if the current value equals this JSON.
    ///   - ttl: kvod deletes the sum this long after the add, as after a set with `ttl`; an add
    ///     without it ends the deadline the value had.
    public static func add(_ object: String, _ keyPath: String, by amount: Int = 1,
                           ifModSeq: UInt64? = nil, ifValue: JSONValue? = nil, ttl: Duration? = nil) -> WriteOperation {
        var operation = WriteOperation(.add, object, keyPath, ifModSeq: ifModSeq, ifValue: ifValue)
        operation.line.integer(.by, amount)
        if let ttl { operation.line.json(.ttl, Self.seconds(ttl).utf8) }
        return operation
    }

    /// The change ops a batch may carry.
    public static let operationNames: Set<String> = Set([Op.set, .delete, .insert, .remove, .replace, .add]
        .map(\.rawValue))

    /// An op as the protocol spells it, e.g. `{"op":"delete","object":"queue/pending"}`
    /// (kvod checks its fields; no `id`). Anything that is not a JSON object
    /// whose `op` is a change op is `KVOClientError.Code.badRequest`.
    public init(request: JSONValue) throws(KVOClientError) {
        guard case .object(var members) = request, case .string(let name)? = members[Field.op.rawValue],
              Self.operationNames.contains(name), let op = Op(rawValue: name)
        else {
            throw KVOClientError(.badRequest, "a batch op must be a JSON object whose op is one of "
                                 + Self.operationNames.sorted().joined(separator: ", "))
        }
        members.removeValue(forKey: Field.op.rawValue)
        line = RequestEncoder(op: op)
        // Members as written, known to kvod or not: kvod names one it does not take.
        for (name, value) in members { line.json(named: name, value.jsonBytes) }
    }

    /// A duration as the protocol's seconds: a whole number when it is one, else a decimal.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return String(seconds) }
        return String(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
