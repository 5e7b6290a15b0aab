import KVOEngine
import KVOValues

extension StateDatabase {
    /// Reads everything back: every document, the last seq, and the newest
    /// changes (within the history limits, consecutive, ending at seq). The
    /// history rows beyond the limits are deleted, so that a later start with
    /// larger limits does not bring back what this one no longer held.
    ///
    /// A row it cannot read (not JSON, nested deeper than
    /// ``DocumentDepth/readerLimit``, a member without its object) does not
    /// keep kvod from starting: the object it belongs to, or the history up to
    /// it, is moved to the `quarantine` table, and ``quarantined`` says what
    /// was moved and why, for the log.
    public func load() throws(StorageError) -> SavedState {
        do {
            let seq = try BackupFile.lastSeq(connection)
            var unreadable = UnreadableRows()
            var documents = try loadDocuments(&unreadable)
            let loaded = try loadHistory(endingAt: seq, &unreadable)
            var history = loaded.changes
            if !unreadable.isEmpty {
                quarantined = try quarantine(unreadable, seq: seq)
                for object in unreadable.objects.keys { documents.removeValue(forKey: object) }
                if let through = unreadable.historyThrough { history.removeAll { $0.seq <= through } }
            }
            history = Self.markingCreatedObjects(history, unflagged: loaded.unflagged)
            try trimHistory(keeping: history, seq: seq)
            let modSeqs = try loadModSeqs(of: documents)
            let leases = try loadLeases(of: documents)
            do {
                return try SavedState(documents: documents, seq: seq, history: history, epoch: try loadEpoch(),
                                      modSeqs: modSeqs, leases: leases)
            } catch {
                throw StorageError("\(path) is inconsistent: \(error)")
            }
        } catch {
            throw StorageError("cannot read \(path)", wrapping: error)
        }
    }

    /// `history` (consecutive, oldest first) with each change of `unflagged`
    /// (whose rows do not say it: format 1 or 2 of ``HistoryBatchCodec``, or
    /// a `history` row) that made its object marked so, where the history
    /// shows it: the object did not exist before the change, because the
    /// history starts at seq 1 (nothing existed then) or the object's
    /// previous change deleted it. Only a change kvod records as making an
    /// object is marked: a set under a key path or an insert, where no key
    /// existed. Where the history does not show it, the flag stays false, as
    /// it was before format 3.
    static func markingCreatedObjects(_ history: [ChangeRecord], unflagged: Set<UInt64>) -> [ChangeRecord] {
        guard !unflagged.isEmpty else { return history }
        // Whether each object exists before the change at hand; nil: not known.
        var exists: [String: Bool] = [:]
        let fromTheStart = history.first?.seq == 1
        return history.map { change in
            let existed = exists[change.object] ?? (fromTheStart ? false : nil)
            exists[change.object] = !change.path.isEmpty || change.new != nil
            guard existed == false, unflagged.contains(change.seq), !change.path.isEmpty, change.existingKeys == 0,
                  change.kind == .insertion || (change.kind == .setting && change.new != nil) else { return change }
            return ChangeRecord(object: change.object, path: change.path, kind: change.kind, indexes: change.indexes,
                                old: change.old, new: change.new, seq: change.seq, existingKeys: change.existingKeys,
                                memberIndex: change.memberIndex, createdObject: true, cause: change.cause)
        }
    }

    private func loadEpoch() throws -> String {
        guard let bits = try connection.integer("SELECT value FROM meta WHERE key = 'epoch'") else {
            throw StorageError("\(path) has no epoch")
        }
        let digits = String(UInt64(bitPattern: bits), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private func loadDocuments(_ unreadable: inout UnreadableRows) throws -> [String: JSONObject] {
        var documents: [String: JSONObject] = [:]
        let objects = try connection.prepare("SELECT name FROM objects")
        while try objects.step() { documents[objects.text(0) ?? ""] = [:] }
        let members = try connection.prepare("""
            SELECT object, key, value FROM members ORDER BY object, created_seq, created_index
            """)
        while try members.step() {
            let object = members.text(0) ?? ""
            let key = members.text(1) ?? ""
            guard documents[object] != nil else {
                unreadable.objects[object] = unreadable.objects[object]
                    ?? "member \(LogText.quoted(key)) belongs to no object"
                continue
            }
            switch Self.parse(members.bytes(2) ?? []) {
            case .success(let value):
                documents[object]![key] = value
            case .failure(let error):
                unreadable.objects[object] = unreadable.objects[object]
                    ?? "member \(LogText.quoted(key)) is not JSON kvod can read (\(error.message))"
            }
        }
        return documents
    }

    /// The newest changes up to `seq`, consecutive, within the history
    /// limits (the rule ``ChangeHistory`` follows), oldest first: read newest
    /// first (the batch rows, then the older rows of a change each), and no
    /// further than the limits, a gap or an unreadable row (which everything
    /// older goes with).
    /// Also returns the seqs of those whose rows do not say whether they made their object.
    private func loadHistory(endingAt seq: UInt64, _ unreadable: inout UnreadableRows) throws
        -> (changes: [ChangeRecord], unflagged: Set<UInt64>) {
        var collector = HistoryCollector(limits: historyLimits, endingAt: seq)
        try collectHistoryBatches(endingAt: seq, into: &collector, &unreadable)
        let select = try connection.prepare("""
            SELECT seq, object, key_path, kind, indexes, old, new, existing_keys, member_index, cause
            FROM history WHERE seq <= ? ORDER BY seq DESC
            """)
        select.bind(1, Int64(bitPattern: seq))
        while !collector.isDone, try select.step() {
            let rowSeq = UInt64(bitPattern: select.int64(0))
            guard collector.wants(rowSeq) else { break }
            do throws(HistoryRowError) {
                collector.offer(try self.change(in: select, seq: rowSeq), flagged: false)
            } catch {
                unreadable.history[rowSeq] = error.reason
                break
            }
        }
        return (collector.newestFirst.reversed(), collector.unflagged)
    }

    /// Deletes the history rows older than `kept` (all of them when it is
    /// empty), writing `seq` to meta first since no row may say it then, and
    /// starts the writer's account of the rows from `kept`.
    private func trimHistory(keeping kept: [ChangeRecord], seq: UInt64) throws {
        let keepAfter = kept.first.map { $0.seq - 1 } ?? seq
        historyRows.restore(kept, seq: seq)
        guard try connection.integer("""
            SELECT (SELECT COUNT(*) FROM history WHERE seq <= \(Int64(bitPattern: keepAfter)))
            + (SELECT COUNT(*) FROM history_batches WHERE first_seq <= \(Int64(bitPattern: keepAfter)))
            """) ?? 0 > 0
        else { return }
        try connection.transaction { () throws(SQLiteError) in
            try deleteHistory(through: keepAfter, seq: seq)
            try trimHistoryBatches(keeping: kept, after: keepAfter)
        }
    }

    private func change(in row: SQLiteStatement, seq: UInt64) throws(HistoryRowError) -> ChangeRecord {
        guard let kind = row.text(3).flatMap(ChangeKind.init(rawValue:)) else {
            throw HistoryRowError(reason: "an unknown kind")
        }
        let keyPath = row.text(2) ?? ""
        let components = keyPath.isEmpty
            ? [] : keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var indexes: [Int] = []
        if let text = row.bytes(4) {
            guard case .success(.array(let values)) = Self.parse(text) else {
                throw HistoryRowError(reason: "unreadable indexes")
            }
            indexes = values.compactMap { if case .number(let n) = $0 { n.intValue } else { nil } }
        }
        return ChangeRecord(
            object: row.text(1) ?? "", path: components, kind: kind, indexes: indexes,
            old: try json(row, 5), new: try json(row, 6), seq: seq,
            existingKeys: Int(row.int64(7)), memberIndex: row.isNull(8) ? nil : Int(row.int64(8)),
            cause: row.text(9).flatMap(ChangeCause.init(rawValue:)))
    }

    private func json(_ row: SQLiteStatement, _ column: Int32) throws(HistoryRowError) -> JSONValue? {
        guard let bytes = row.bytes(column) else { return nil }
        switch Self.parse(bytes) {
        case .success(let value): return value
        case .failure(let error):
            throw HistoryRowError(reason: "a value that is not JSON kvod can read (\(error.message))")
        }
    }

    /// Every stored value is read as leniently as any reader of kvod's
    /// documents must be (``DocumentDepth/readerLimit``).
    private static func parse(_ bytes: [UInt8]) -> Result<JSONValue, JSONError> {
        Result { () throws(JSONError) in try JSONReader.parse(bytes, maxDepth: DocumentDepth.readerLimit) }
    }
}
