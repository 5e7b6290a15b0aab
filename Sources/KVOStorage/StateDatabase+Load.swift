import KVOEngine

extension StateDatabase {
    /// Reads everything back: every document, the last seq, and the newest
    /// changes (at most the history capacity, consecutive, ending at seq).
    ///
    /// A row it cannot read (not JSON, nested deeper than
    /// ``DocumentDepth/readerLimit``, a member without its object) does not
    /// keep kvod from starting: the object it belongs to, or the history up to
    /// it, is moved to the `quarantine` table, and ``quarantined`` says what
    /// was moved and why, for the log.
    public func load() throws(StorageError) -> SavedState {
        do {
            let seq = UInt64(bitPattern: try connection.integer("""
                SELECT MAX(value) FROM (SELECT value FROM meta WHERE key = 'seq' UNION ALL SELECT MAX(seq) FROM history)
                """) ?? 0)
            var unreadable = UnreadableRows()
            var documents = try loadDocuments(&unreadable)
            let keepAfter = seq > UInt64(historyCapacity) ? seq - UInt64(historyCapacity) : 0
            var history = try loadHistory(after: keepAfter, &unreadable)
            if !unreadable.isEmpty {
                quarantined = try quarantine(unreadable, seq: seq)
                for object in unreadable.objects.keys { documents.removeValue(forKey: object) }
                if let through = unreadable.history.keys.max() { history.removeAll { $0.seq <= through } }
            }
            let modSeqs = try loadModSeqs(of: documents)
            let leases = try loadLeases(of: documents)
            do {
                return try SavedState(documents: documents, seq: seq, history: history, epoch: try loadEpoch(),
                                      modSeqs: modSeqs, leases: leases)
            } catch {
                throw StorageError("\(path) is inconsistent: \(error)")
            }
        } catch let error as StorageError {
            throw error
        } catch let error as SQLiteError {
            throw StorageError("cannot read \(path)", error)
        } catch {
            throw StorageError("cannot read \(path): \(error)")
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

    private func loadHistory(after seq: UInt64, _ unreadable: inout UnreadableRows) throws -> [ChangeRecord] {
        let select = try connection.prepare("""
            SELECT seq, object, key_path, kind, indexes, old, new, existing_keys, member_index, cause
            FROM history WHERE seq > ? ORDER BY seq
            """)
        select.bind(1, Int64(bitPattern: seq))
        var changes: [ChangeRecord] = []
        while try select.step() {
            let seq = UInt64(bitPattern: select.int64(0))
            do throws(HistoryRowError) {
                changes.append(try change(in: select, seq: seq))
            } catch {
                unreadable.history[seq] = error.reason
            }
        }
        return changes
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

/// Why one history row could not be read.
private struct HistoryRowError: Error {
    let reason: String
}
