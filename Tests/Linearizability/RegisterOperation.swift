/// What a client asks of one kvod object whose key paths hold registers
/// (``KeyPathRegisterModel``). Values and key paths are numbers: the caller
/// names them (a value is written once in a run, so it names its write).

/// A `set`'s condition: `ifModSeq` or `ifValue` on the key path it writes.
public enum RegisterCondition: Hashable, Sendable {
    case modSeq(Int)
    case value(Int)
}

/// One `set` of key path `path` to `value`, under `condition` if any.
public struct RegisterWrite: Hashable, Sendable {
    public var path: Int
    public var value: Int
    public var condition: RegisterCondition?

    public init(path: Int, value: Int, condition: RegisterCondition? = nil) {
        self.path = path
        self.value = value
        self.condition = condition
    }
}

public enum RegisterInput: Hashable, Sendable {
    /// A `set` (one write), or a `batch` of sets of the object's key paths,
    /// applied in order, all or none.
    case write([RegisterWrite])
    /// A `get` of one key path.
    case read(path: Int)
    /// A `get` of the whole document: every key path at once.
    case readAll
}

public enum RegisterOutput: Hashable, Sendable {
    /// The write was applied at this seq (an etcd revision: a batch's writes share it).
    case applied(seq: Int)
    /// A condition did not hold (`precondition_failed`): nothing changed.
    case conditionFailed
    /// Refused before anything was tried (`unavailable` saying nothing
    /// changed): nothing changed, nothing was observed.
    case notApplied
    /// A `get` of one key path: its value and modSeq; and, if known, the
    /// seqs the last write applied before it may have (a read at seq R
    /// comes after the object's writes up to R and before those above R:
    /// after the last one up to R, at S, the range S...R).
    case value(Int, modSeq: Int?, after: ClosedRange<Int>? = nil)
    /// A `get` of the whole document: each key path's value, and the same range.
    case values([Int], after: ClosedRange<Int>? = nil)
}
