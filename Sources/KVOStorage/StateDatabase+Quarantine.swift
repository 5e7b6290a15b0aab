import KVOEngine

/// What a load could not read: objects by name, history rows by seq,
/// history batch rows by their last seq, each with the reason.
struct UnreadableRows {
    var objects: [String: String] = [:]
    var history: [UInt64: String] = [:]
    var historyBatches: [UInt64: String] = [:]
    var isEmpty: Bool { objects.isEmpty && history.isEmpty && historyBatches.isEmpty }
    /// The newest seq an unreadable history row holds: the history up to it goes.
    var historyThrough: UInt64? { (Array(history.keys) + Array(historyBatches.keys)).max() }
}

/// Moving unreadable rows aside, so that one bad row costs its object, not
/// the whole data directory.
extension StateDatabase {
    /// Moves every row of each unreadable object, each unreadable history row,
    /// and the history before it (a history with a gap could not be replayed;
    /// an observer resuming from before it is told `compacted`), into the
    /// `quarantine` table, in one transaction. The seq is written to `meta`
    /// first, so that it never goes back. Returns one line per move.
    func quarantine(_ unreadable: UnreadableRows, seq: UInt64) throws(SQLiteError) -> [String] {
        var report: [String] = []
        try connection.transaction { () throws(SQLiteError) in
            let moveMembers = try connection.prepare("""
                INSERT INTO quarantine (reason, source, object, key, seq, value)
                SELECT ?, 'members', object, key, created_seq, value FROM members WHERE object = ?
                """)
            for (object, reason) in unreadable.objects.sorted(by: { $0.key < $1.key }) {
                moveMembers.bind(1, reason)
                moveMembers.bind(2, object)
                try moveMembers.run()
                // Its object row, and the modSeqs in these rows, go too: without them it counts as new.
                for delete in [statements.deleteMembers, statements.deleteObject] {
                    delete.bind(1, object)
                    try delete.run()
                }
                report.append("object \(LogText.quoted(object)) moved to the quarantine table of \(path): \(reason)")
            }
            if let through = unreadable.historyThrough {
                let moveHistory = try connection.prepare("""
                    INSERT INTO quarantine (reason, source, object, key, seq, value, old)
                    SELECT ?, 'history', object, key_path, seq, new, old FROM history WHERE seq = ?
                    """)
                for (rowSeq, reason) in unreadable.history.sorted(by: { $0.key < $1.key }) {
                    moveHistory.bind(1, reason)
                    moveHistory.bind(2, Int64(bitPattern: rowSeq))
                    try moveHistory.run()
                    report.append("history row \(rowSeq) moved to the quarantine table of \(path): \(reason)")
                }
                let moveBatch = try connection.prepare("""
                    INSERT INTO quarantine (reason, source, object, seq, value)
                    SELECT ?, 'history_batches', '', last_seq, changes FROM history_batches WHERE last_seq = ?
                    """)
                for (lastSeq, reason) in unreadable.historyBatches.sorted(by: { $0.key < $1.key }) {
                    moveBatch.bind(1, reason)
                    moveBatch.bind(2, Int64(bitPattern: lastSeq))
                    try moveBatch.run()
                    report.append("history batch row \(lastSeq) moved to the quarantine table of \(path): \(reason)")
                }
                try deleteHistory(through: through, seq: seq)
                report.append("the history through seq \(through) is dropped: a resume from before it gets compacted")
            }
        }
        return report
    }
}
