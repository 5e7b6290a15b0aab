import KVOEngine

extension StateDatabase {
    /// Reads everything back: every document, the last seq, and the newest
    /// changes (at most the history capacity, consecutive, ending at seq).
    /// A row that does not parse is an error naming it: kvod will not start
    /// on a state it cannot read whole.
    public func load() throws(StorageError) -> SavedState {
        do {
            let seq = UInt64(bitPattern: try connection.integer("""
                SELECT MAX(value) FROM (SELECT value FROM meta WHERE key = 'seq' UNION ALL SELECT MAX(seq) FROM history)
                """) ?? 0)
            let documents = try loadDocuments()
            let keepAfter = seq > UInt64(historyCapacity) ? seq - UInt64(historyCapacity) : 0
            let history = try loadHistory(after: keepAfter)
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

    private func loadDocuments() throws -> [String: JSONObject] {
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
                throw StorageError("\(path): member \(key) belongs to no object (\(object))")
            }
            guard let value = try? JSONReader.parse(members.bytes(2) ?? []) else {
                throw StorageError("\(path): member \(key) of object \(object) is not JSON")
            }
            documents[object]![key] = value
        }
        return documents
    }

    private func loadHistory(after seq: UInt64) throws -> [ChangeRecord] {
        let select = try connection.prepare("""
            SELECT seq, object, key_path, kind, indexes, old, new, existing_keys, member_index, cause
            FROM history WHERE seq > ? ORDER BY seq
            """)
        select.bind(1, Int64(bitPattern: seq))
        var changes: [ChangeRecord] = []
        while try select.step() {
            let seq = UInt64(bitPattern: select.int64(0))
            guard let kind = select.text(3).flatMap(ChangeKind.init(rawValue:)) else {
                throw StorageError("\(path): history row \(seq) has an unknown kind")
            }
            let keyPath = select.text(2) ?? ""
            let components = keyPath.isEmpty
                ? [] : keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var indexes: [Int] = []
            if let text = select.bytes(4) {
                guard case .array(let values)? = try? JSONReader.parse(text) else {
                    throw StorageError("\(path): history row \(seq) has unreadable indexes")
                }
                indexes = values.compactMap { if case .number(let n) = $0 { n.intValue } else { nil } }
            }
            changes.append(ChangeRecord(
                object: select.text(1) ?? "", path: components, kind: kind, indexes: indexes,
                old: try json(select, 5, seq), new: try json(select, 6, seq), seq: seq,
                existingKeys: Int(select.int64(7)), memberIndex: select.isNull(8) ? nil : Int(select.int64(8)),
                cause: select.text(9).flatMap(ChangeCause.init(rawValue:))))
        }
        return changes
    }

    private func json(_ row: SQLiteStatement, _ column: Int32, _ seq: UInt64) throws -> JSONValue? {
        guard let bytes = row.bytes(column) else { return nil }
        guard let value = try? JSONReader.parse(bytes) else {
            throw StorageError("\(path): history row \(seq) holds a value that is not JSON")
        }
        return value
    }
}
