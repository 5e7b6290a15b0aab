import DequeModule

/// The most recent changes, oldest first, at most ``capacity`` of them: what
/// `observe` with `since` replays (etcd's watch history).
///
/// The changes held are consecutive: their seqs run without a gap from
/// ``oldestSeq`` to the store's seq, so the changes after a seq start at a
/// known position and a replay reads only those, not the whole history. (A
/// per-object index would spare a resume reading other objects' changes, but
/// it cost every change a hash and two queue operations: a tenth of a `set`.)
public final class ChangeHistory {
    /// The most changes kept; 0 keeps none (only `since` = the current seq works).
    public let capacity: Int
    private var changes: Deque<ChangeRecord> = []
    private var newestSeq: UInt64?

    public init(capacity: Int) {
        precondition(capacity >= 0, "history capacity must not be negative")
        self.capacity = capacity
    }

    /// How many changes are held.
    public var count: Int { changes.count }

    /// The seq of the oldest change held, or nil when none is.
    public var oldestSeq: UInt64? { changes.first?.seq }

    /// Every change held, oldest first.
    public var all: [ChangeRecord] { Array(changes) }

    /// Adds the newest change, forgetting the oldest one beyond ``capacity``.
    /// `change.seq` must follow the last change held.
    func append(_ change: ChangeRecord) {
        guard capacity > 0 else { return }
        // The newest seq is kept apart: reading it from the last record
        // would copy the record.
        precondition(newestSeq.map { change.seq == $0 + 1 } ?? true, "history must stay consecutive")
        if changes.count == capacity { changes.removeFirst() }
        changes.append(change)
        newestSeq = change.seq
    }

    /// Replaces what is held by `restored` (consecutive, oldest first), keeping
    /// the newest ``capacity`` of them.
    func restore(_ restored: [ChangeRecord]) {
        changes = []
        newestSeq = nil
        for change in restored.suffix(capacity) { append(change) }
    }

    /// The changes after `seq`, oldest first, read in place: a replay walks
    /// them forwards and backwards without a copy of the list. Only complete
    /// when `seq + 1 >= oldestSeq` (the caller checks).
    func changes(after seq: UInt64) -> Deque<ChangeRecord>.SubSequence {
        guard let first = changes.first?.seq else { return changes[...] }
        let start = seq < first ? 0 : Int(min(seq - first + 1, UInt64(changes.count)))
        return changes[start...]
    }
}
