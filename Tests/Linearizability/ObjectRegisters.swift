/// The state of one kvod object in ``KeyPathRegisterModel``: each key path's
/// value and modSeq, and the seq of the last write applied.
public struct ObjectRegisters: Hashable, Sendable {
    public var values: [Int]
    /// Each key path's modSeq; ``unknownModSeq`` after a write whose outcome
    /// was unknown, until a read or a condition tells it.
    public var modSeqs: [Int]
    /// The highest seq a write applied so far: writes take effect in the
    /// order of their seqs, and a read at seq R comes before every write above R.
    public var lastSeq: Int

    public static let unknownModSeq = -1

    public init(values: [Int], modSeqs: [Int], lastSeq: Int = 0) {
        precondition(values.count == modSeqs.count)
        self.values = values
        self.modSeqs = modSeqs
        self.lastSeq = lastSeq
    }
}
