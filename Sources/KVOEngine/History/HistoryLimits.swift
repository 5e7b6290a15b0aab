/// How much change history kvod keeps for `observe` with `since`: at most
/// ``maxChanges`` changes and at most ``maxBytes`` bytes of them (each
/// change's ``ChangeRecord/bytes``), the oldest going first. One rule for the
/// history in memory (``ChangeHistory``) and on disk (KVOStorage), so that
/// both keep the same changes, and a restart the same as before it.
public struct HistoryLimits: Sendable, Equatable {
    /// `--history`: the most changes kept.
    public var maxChanges: Int
    /// `--history-bytes`: the most bytes of changes kept.
    public var maxBytes: Int

    /// `--history-bytes`' default: 64 MiB.
    public static let defaultMaxBytes = 64 << 20

    public init(maxChanges: Int = 100_000, maxBytes: Int = HistoryLimits.defaultMaxBytes) {
        precondition(maxChanges >= 0 && maxBytes >= 0, "history limits must not be negative")
        self.maxChanges = maxChanges
        self.maxBytes = maxBytes
    }

    /// Whether `count` changes of `bytes` in all are more than is kept: the
    /// oldest of them must go (until this says false).
    public func areExceeded(count: Int, bytes: Int) -> Bool {
        count > maxChanges || bytes > maxBytes
    }
}
