import DequeModule

/// The most recent changes, oldest first, at most ``capacity`` of them: what
/// `observe` with `since` replays (etcd's watch history).
///
/// The changes held are consecutive: their seqs run without a gap from
/// ``oldestSeq`` to the store's seq. Each object's changes are also indexed,
/// so a replay costs the object's changes after `since`, not the whole history.
public final class ChangeHistory {
    /// The most changes kept; 0 keeps none (only `since` = the current seq works).
    public let capacity: Int
    private var changes: Deque<ChangeRecord> = []
    private var seqsByObject: [String: Deque<UInt64>] = [:]

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
        if let last = changes.last {
            precondition(change.seq == last.seq + 1, "history must stay consecutive")
        }
        if changes.count == capacity { dropOldest() }
        changes.append(change)
        seqsByObject[change.object, default: []].append(change.seq)
    }

    private func dropOldest() {
        let oldest = changes.removeFirst()
        seqsByObject[oldest.object]?.removeFirst()
        if seqsByObject[oldest.object]?.isEmpty == true { seqsByObject[oldest.object] = nil }
    }

    /// Replaces what is held by `restored` (consecutive, oldest first), keeping
    /// the newest ``capacity`` of them.
    func restore(_ restored: [ChangeRecord]) {
        changes = []
        seqsByObject = [:]
        for change in restored.suffix(capacity) { append(change) }
    }

    /// The changes to `object` after `seq`, oldest first. Only complete when
    /// `seq + 1 >= oldestSeq` (the caller checks).
    func changes(of object: String, after seq: UInt64) -> [ChangeRecord] {
        guard let seqs = seqsByObject[object], let first = changes.first?.seq else { return [] }
        // The first of the object's seqs that is after `seq` (binary search).
        var low = 0
        var high = seqs.count
        while low < high {
            let middle = (low + high) / 2
            if seqs[middle] <= seq { low = middle + 1 } else { high = middle }
        }
        return seqs[low...].map { changes[Int($0 - first)] }
    }
}
