import KVOProtocol
import KVOValues

/// What a change op asks of the value at its key path before it applies
/// (`ifModSeq`, `ifValue`): a compare-and-set. When it does not hold, the op
/// fails with `precondition_failed` and changes nothing.
public struct WriteCondition: Sendable, Equatable {
    /// The modSeq the value must have; 0: there must be no value.
    public var ifModSeq: UInt64?
    /// The value there must be, compared as JSON (``JSONValue/isEquivalent(to:)``);
    /// nil: no such condition. `.null` matches a null value, not a missing one.
    public var ifValue: JSONValue?

    /// Throws `precondition_failed` (with the value's current `modSeq`) when
    /// the condition does not hold for `keyPath` of `object` in `store`.
    func check(in store: Store, _ object: String, _ keyPath: ObservedPath?) throws(KVOEngineError) {
        let keys = keyPath?.components ?? []
        let current = store.value(object, at: keys)
        let modSeq = current == nil ? 0 : store.modSeq(object, at: keys)
        let place = keyPath.map { "\(object) \($0)" } ?? object
        let details = JSONObject([KVOProtocol.Field.modSeq: .number(JSONNumber(validatedLiteral: String(modSeq)))])
        if let expected = ifModSeq, expected != modSeq {
            throw KVOEngineError(.preconditionFailed, "\(place) has modSeq \(modSeq), not \(expected)", details: details)
        }
        guard let expected = ifValue else { return }
        guard let current else { throw KVOEngineError(.preconditionFailed, "\(place) has no value", details: details) }
        guard current.isEquivalent(to: expected) else {
            throw KVOEngineError(.preconditionFailed, "\(place) holds another value", details: details)
        }
    }
}

/// One change op of a `batch`, or a change request with its condition.
public struct ChangeOperation {
    /// `set`, `delete`, `insert`, `remove` or `replace`.
    public var operation: Operation
    public var condition: WriteCondition?
    /// A set's `ephemeral`/`ttl`.
    public var lifetime: ValueLifetime?
}
