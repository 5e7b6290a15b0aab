import DequeModule
import KVOEngine

/// The history rows the data directory keeps, by the same rule as the
/// history in memory (``HistoryLimits``: a count and bytes, oldest first):
/// each row's seq and ``ChangeRecord/bytes``, so that the writer knows which
/// rows fall out without reading them back.
///
/// Rows that fell out are deleted in steps (``StateDatabase/write(_:)``):
/// until then they are `garbage`, still in the table but no longer loaded.
///
/// A write that SQLite rolls back (a full disk) is tried again with the same
/// changes: ``beginWrite()`` notes where the rows stood, and ``rollBack()``
/// puts them back there, so that the retry counts each change once.
struct HistoryRows {
    let limits: HistoryLimits
    private var rows: Deque<(seq: UInt64, bytes: Int)> = []
    private var bytes = 0
    /// Every seq up to this one is out of the history.
    private(set) var droppedThrough: UInt64 = 0
    /// The last seq written to the table.
    private var writtenThrough: UInt64 = 0
    /// Rows in the table that fell out and are not deleted yet, and their bytes.
    private(set) var garbageRows = 0
    private(set) var garbageBytes = 0
    /// Where the rows stood before the write under way (nil: none), to undo it.
    private var undo: Undo?
    /// The rows that were there before the write under way and that it
    /// pushed out of the front, oldest first: ``rollBack()`` puts them back.
    /// Kept beside `undo` so that its capacity serves the next write.
    private var pushedOut: [(seq: UInt64, bytes: Int)] = []

    private struct Undo {
        /// The newest row's seq before the write (0: there was none).
        var lastSeq: UInt64
        var bytes: Int
        var droppedThrough: UInt64
        var garbageRows: Int
        var garbageBytes: Int
    }

    init(limits: HistoryLimits) {
        self.limits = limits
    }

    /// Whether no change is kept (then no row says the last seq).
    var isEmpty: Bool { rows.isEmpty }

    /// Starts from the rows a load kept (consecutive, oldest first) after `seq`
    /// was the last: everything before them is out.
    mutating func restore(_ kept: [ChangeRecord], seq: UInt64) {
        rows = Deque(kept.map { ($0.seq, $0.bytes) })
        bytes = kept.reduce(0) { $0 + $1.bytes }
        droppedThrough = kept.first.map { $0.seq - 1 } ?? seq
        writtenThrough = seq
        garbageRows = 0
        garbageBytes = 0
    }

    /// Adds the newest change; the oldest fall out while the limits are
    /// exceeded (the new one too, if it alone is over the bytes).
    mutating func append(_ change: ChangeRecord) {
        guard limits.maxChanges > 0 else {
            droppedThrough = change.seq
            return
        }
        rows.append((change.seq, change.bytes))
        bytes += change.bytes
        while limits.areExceeded(count: rows.count, bytes: bytes) {
            let oldest = rows.removeFirst()
            // Only a row that was there before the write needs putting back.
            if oldest.seq <= undo?.lastSeq ?? 0 { pushedOut.append(oldest) }
            bytes -= oldest.bytes
            droppedThrough = oldest.seq
            if oldest.seq <= writtenThrough {
                garbageRows += 1
                garbageBytes += oldest.bytes
            }
        }
    }

    /// A write begins: what ``append(_:)`` does from now on can be undone.
    mutating func beginWrite() {
        undo = Undo(lastSeq: rows.last?.seq ?? 0, bytes: bytes, droppedThrough: droppedThrough,
                    garbageRows: garbageRows, garbageBytes: garbageBytes)
        pushedOut.removeAll(keepingCapacity: true)
    }

    /// The write committed: nothing to undo.
    mutating func endWrite() {
        undo = nil
    }

    /// The write was rolled back: the rows are as ``beginWrite()`` found them.
    mutating func rollBack() {
        guard let undo else { return }
        self.undo = nil
        while let last = rows.last, last.seq > undo.lastSeq { rows.removeLast() }
        for row in pushedOut.reversed() { rows.prepend(row) }
        pushedOut.removeAll(keepingCapacity: true)
        bytes = undo.bytes
        droppedThrough = undo.droppedThrough
        garbageRows = undo.garbageRows
        garbageBytes = undo.garbageBytes
    }

    /// The rows up to `seq` are in the table (committed).
    mutating func wrote(through seq: UInt64) {
        writtenThrough = max(writtenThrough, seq)
    }

    /// The garbage rows were deleted.
    mutating func trimmed() {
        garbageRows = 0
        garbageBytes = 0
    }
}
