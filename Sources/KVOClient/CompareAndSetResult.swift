/// What a conditional write did (`KVOConnection.compareAndSet(_:_:to:ifModSeq:ifValue:ephemeral:ttl:)`,
/// ``KVOConnection/compareAndPerform(_:)``): applied, or not because the value was not as the condition said.
///
/// A condition that does not hold is an expected outcome of a compare-and-set
/// loop, not an error: it comes back as ``conflict(modSeq:)``, so the loop
/// needs no `catch` (a `catch … where error.code == .preconditionFailed` in a
/// value-returning async function crashes the Swift 6.3 compiler).
public enum CompareAndSetResult: Sendable, Hashable {
    /// The write was applied as the change with this seq (also the value's new modSeq).
    case applied(seq: UInt64)
    /// The condition did not hold, so nothing changed: the value's current
    /// modSeq (`0`: there is no value), to read it again or to retry with.
    case conflict(modSeq: UInt64)

    /// Whether the write was applied.
    public var isApplied: Bool {
        if case .applied = self { true } else { false }
    }
}
