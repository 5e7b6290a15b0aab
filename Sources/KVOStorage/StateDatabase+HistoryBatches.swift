import KVOEngine

/// The history on disk since schema version 3: a row per run of changes that
/// one commit wrote (``HistoryBatchCodec``), not a row per change, which cost
/// the writer thread most of its time per change. Rows of the `history`
/// table (a row per change, versions 1 and 2) are still read, older than any
/// batch row, and trimmed as before.
extension StateDatabase {
    static let historyBatchSchema = """
        CREATE TABLE history_batches (
            last_seq INTEGER PRIMARY KEY,
            first_seq INTEGER NOT NULL,
            changes BLOB NOT NULL
        )
        """
    /// A commit's changes go in rows of about this many bytes at most, so a
    /// load decodes, and a trim keeps, no more than about this much beside
    /// what the history holds.
    static let historyBatchBytes = 256 << 10

    /// Version 2 → 3: the `history_batches` table; the `history` rows stay.
    static func migrateFromVersion2(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("BEGIN; \(historyBatchSchema); PRAGMA user_version = 3; COMMIT;")
    }

    /// Version 3 → 4: rows in ``HistoryBatchCodec``'s format 2, which a
    /// version 3 kvod cannot read; its format 1 rows stay and are read.
    static func migrateFromVersion3(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("PRAGMA user_version = 4")
    }

    /// Version 5 → 6: rows in format 3, which say which change made its
    /// object and which a version 5 kvod cannot read; its format 2 rows stay
    /// and are read.
    static func migrateFromVersion5(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("PRAGMA user_version = 6")
    }

    /// Writes the batches' changes after `keepAfter` as history batch rows.
    func insertHistoryBatches(_ batches: [CommitBatch], after keepAfter: UInt64) throws(SQLiteError) {
        // A local encoder: appending to a property of this class would check exclusive access at each call.
        var encoder = HistoryBatchEncoder()
        swap(&encoder, &historyEncoder)
        defer { swap(&encoder, &historyEncoder) }
        var first: UInt64?
        var last: UInt64 = 0
        encoder.begin()
        for batch in batches {
            for change in batch.changes where change.seq > keepAfter {
                if first == nil { first = change.seq }
                encoder.append(change)
                last = change.seq
                if encoder.count >= Self.historyBatchBytes {
                    try insertHistoryBatch(first: first!, last: last, encoder)
                    first = nil
                    encoder.begin()
                }
            }
        }
        if let first { try insertHistoryBatch(first: first, last: last, encoder) }
    }

    private func insertHistoryBatch(first: UInt64, last: UInt64, _ encoder: borrowing HistoryBatchEncoder) throws(SQLiteError) {
        let insert = statements.insertHistoryBatch
        insert.bind(1, Int64(bitPattern: last))
        insert.bind(2, Int64(bitPattern: first))
        encoder.withBytes { insert.bind(3, blob: $0) }
        try insert.run()
    }

    /// Offers the history batch rows' changes up to `seq` to `collector`,
    /// newest first, until it is full; a row it cannot read is noted in
    /// `unreadable` (all of it: its changes and everything older go).
    func collectHistoryBatches(endingAt seq: UInt64, into collector: inout HistoryCollector,
                               _ unreadable: inout UnreadableRows) throws(SQLiteError) {
        let select = try connection.prepare("""
            SELECT last_seq, first_seq, changes FROM history_batches WHERE first_seq <= ? ORDER BY last_seq DESC
            """)
        select.bind(1, Int64(bitPattern: seq))
        while !collector.isDone, try select.step() {
            let last = UInt64(bitPattern: select.int64(0))
            let first = UInt64(bitPattern: select.int64(1))
            do throws(HistoryRowError) {
                let blob = select.blob(2) ?? []
                let changes = try HistoryBatchCodec.decode(blob, firstSeq: first)
                guard changes.last?.seq == last else { throw HistoryRowError(reason: "a history batch cut short") }
                let flagged = HistoryBatchCodec.recordsCreatedObject(blob)
                for change in changes.reversed() where !collector.isDone { collector.offer(change, flagged: flagged) }
            } catch {
                unreadable.historyBatches[last] = error.reason
                collector.isDone = true
            }
        }
    }

    /// Rewrites the batch row that straddles `keepAfter` (those wholly at or
    /// before it are deleted, ``deleteHistory(through:seq:)``) with only the
    /// changes of `kept` it holds, so that a later start with larger limits
    /// brings back nothing that was out of the history. Inside the caller's transaction.
    func trimHistoryBatches(keeping kept: [ChangeRecord], after keepAfter: UInt64) throws(SQLiteError) {
        let straddling = try connection.prepare("SELECT last_seq FROM history_batches WHERE first_seq <= ?")
        straddling.bind(1, Int64(bitPattern: keepAfter))
        guard try straddling.step() else { return }
        let last = UInt64(bitPattern: straddling.int64(0))
        straddling.reset()
        var encoder = HistoryBatchEncoder()
        encoder.begin()
        for change in kept where change.seq <= last { encoder.append(change) }
        let rewrite = try connection.prepare("UPDATE history_batches SET first_seq = ?, changes = ? WHERE last_seq = ?")
        rewrite.bind(1, Int64(bitPattern: keepAfter + 1))
        encoder.withBytes { rewrite.bind(2, blob: $0) }
        rewrite.bind(3, Int64(bitPattern: last))
        try rewrite.run()
    }
}

/// The newest changes a load keeps, offered newest first: consecutive down
/// from the last seq, within the history limits (the rule ``ChangeHistory``
/// follows). Done at the first gap or change over the limits.
struct HistoryCollector {
    let limits: HistoryLimits
    private(set) var newestFirst: [ChangeRecord] = []
    /// The seqs of the kept changes whose rows do not say whether they made
    /// their object (``StateDatabase/markingCreatedObjects(_:unflagged:)``).
    private(set) var unflagged: Set<UInt64> = []
    private var bytes = 0
    private var expected: UInt64
    var isDone = false

    init(limits: HistoryLimits, endingAt seq: UInt64) {
        self.limits = limits
        expected = seq
    }

    /// Whether the change with this seq would be the next one kept (limits aside).
    func wants(_ seq: UInt64) -> Bool { !isDone && seq == expected && seq > 0 }

    /// `flagged`: the change's row says whether it made its object.
    mutating func offer(_ change: ChangeRecord, flagged: Bool) {
        guard wants(change.seq),
              !limits.areExceeded(count: newestFirst.count + 1, bytes: bytes + change.bytes) else {
            isDone = true
            return
        }
        newestFirst.append(change)
        if !flagged { unflagged.insert(change.seq) }
        bytes += change.bytes
        expected -= 1
    }
}
