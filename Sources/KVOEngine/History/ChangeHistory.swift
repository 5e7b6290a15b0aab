import DequeModule

/// The most recent changes, oldest first, within ``limits`` (a count and
/// bytes): what `observe` with `since` replays (etcd's watch history).
///
/// The changes held are consecutive: their seqs run without a gap from
/// ``oldestSeq`` to the store's seq, so the changes after a seq start at a
/// known position and a replay reads only those, not the whole history. (A
/// per-object index would spare a resume reading other objects' changes, but
/// it cost every change a hash and two queue operations; docs/PERFORMANCE.md.)
/// Over etcd (docs/CLUSTER.md) seqs are revisions, which skip the revisions of
/// other keys: such a history is searched instead.
public final class ChangeHistory {
    /// How many changes, and how many bytes of them, are kept at most.
    public let limits: HistoryLimits
    @exclusivity(unchecked) private var changes: Deque<ChangeRecord> = []
    @exclusivity(unchecked) private var newestSeq: UInt64?
    /// Whether some seq held does not follow the one before it (cluster mode).
    @exclusivity(unchecked) private var hasGaps = false
    /// The seq of the newest change forgotten, or the one the history
    /// started after (``start(after:)``): every change after it is held. The
    /// rest of its etcd revision (a batch's changes share it) is not held either.
    @exclusivity(unchecked) public private(set) var forgottenSeq: UInt64?
    /// The sum of the held changes' ``ChangeRecord/bytes``.
    @exclusivity(unchecked) public private(set) var bytes = 0

    public init(limits: HistoryLimits) {
        self.limits = limits
    }

    /// A history bounded by `capacity` changes (and the default bytes).
    public convenience init(capacity: Int) {
        self.init(limits: HistoryLimits(maxChanges: capacity))
    }

    /// The most changes kept; 0 keeps none (only `since` = the current seq works).
    public var capacity: Int { limits.maxChanges }

    /// How many changes are held.
    public var count: Int { changes.count }

    /// The seq of the oldest change held, or nil when none is.
    public var oldestSeq: UInt64? { changes.first?.seq }

    /// Every change held, oldest first.
    public var all: [ChangeRecord] { Array(changes) }

    /// Adds the newest change, forgetting the oldest ones beyond the limits
    /// (the new one too, when it alone is over the bytes: then none is held).
    /// `change.seq` must not be before the last change held (changes of one
    /// etcd revision share it, and are held all or none: a resume from before
    /// the revision replays it whole or is `compacted`).
    func append(_ change: ChangeRecord) {
        guard limits.maxChanges > 0 else {
            if forgottenSeq != nil { forgottenSeq = change.seq }
            return
        }
        // The newest seq is kept apart: reading it from the last record
        // would copy the record.
        if let newestSeq, change.seq != newestSeq + 1 {
            precondition(change.seq >= newestSeq, "history seqs must not go back")
            hasGaps = true
        }
        newestSeq = change.seq
        guard change.seq != forgottenSeq else { return }
        changes.append(change)
        bytes += change.bytes
        guard limits.areExceeded(count: changes.count, bytes: bytes) else { return }
        repeat {
            let gone = changes.removeFirst()
            bytes -= gone.bytes
            forgottenSeq = gone.seq
        } while limits.areExceeded(count: changes.count, bytes: bytes)
        while let first = changes.first, first.seq == forgottenSeq {
            bytes -= changes.removeFirst().bytes
        }
    }

    /// Replaces what is held by `restored` (consecutive, oldest first), keeping
    /// the newest of them within the limits.
    func restore(_ restored: [ChangeRecord]) {
        changes = []
        bytes = 0
        newestSeq = nil
        hasGaps = false
        forgottenSeq = nil
        for change in restored.suffix(limits.maxChanges) { append(change) }
    }

    /// Forgets what is held and starts again after `seq`: over etcd, whose
    /// seqs skip, the first change held may come long after it, yet no change
    /// between them is missing (a replica loaded at revision `seq`).
    func start(after seq: UInt64) {
        restore([])
        forgottenSeq = seq
    }

    /// The changes after `seq`, oldest first, read in place: a replay walks
    /// them forwards and backwards without a copy of the list. Only complete
    /// when `seq + 1 >= oldestSeq` (the caller checks).
    func changes(after seq: UInt64) -> Deque<ChangeRecord>.SubSequence {
        guard let first = changes.first?.seq else { return changes[...] }
        // A history with gaps: a binary search.
        if hasGaps { return changes[changes.partitionPoint { $0.seq <= seq }...] }
        let start = seq < first ? 0 : Int(min(seq - first + 1, UInt64(changes.count)))
        return changes[start...]
    }
}
