import KVOEngine
import KVOValues

/// The write path: one transaction per group of batches.
extension StateDatabase {
    /// Commits `batches` in one transaction: their changes into the history
    /// (trimmed to the history limits) and the top-level members they
    /// touched, as they are after the last batch. In the operating system
    /// on return; on the disk once the WAL is synced (``StorageWriter``'s
    /// syncers; a checkpoint syncs it too). When it throws, nothing of the
    /// batches is written and this object is as before, so that the same
    /// batches may be written again (after a full disk, ``StorageError/isFull``).
    public func write(_ batches: [CommitBatch]) throws(StorageError) {
        guard let lastSeq = batches.last?.changes.last?.seq else { return }
        var edits: [ObjectEdit] = []
        var order: [String] = []
        var indexOf: [String: Int] = [:]
        // Changes come in runs on one object: the last one's index saves hashing its name.
        var last: (name: String, index: Int)?
        // Moved out: appending to this class's property would check exclusive access at each change.
        var rows = historyRows
        historyRows = HistoryRows(limits: historyLimits)
        rows.beginWrite()
        // Whether any change may start or end a lease (most commits have none to write).
        var touchesLeases = !leasedObjects.isEmpty
        for batch in batches {
            for change in batch.changes {
                rows.append(change)
                if change.lease != nil { touchesLeases = true }
                let index: Int
                if let last, last.name == change.object {
                    index = last.index
                } else if let known = indexOf[change.object] {
                    index = known
                } else {
                    index = edits.count
                    indexOf[change.object] = index
                    order.append(change.object)
                    edits.append(ObjectEdit())
                }
                last = (change.object, index)
                edits[index].add(change)
            }
            for (name, document) in batch.documents {
                if let index = indexOf[name] { edits[index].document = document }
            }
            for (name, tree) in batch.modSeqs {
                if let index = indexOf[name] { edits[index].modSeqs = tree }
            }
        }
        historyRows = rows
        // Rows that fell out go in steps, or at once when none is left (then
        // no row may be older than the seq meta says).
        let keepAfter = historyRows.droppedThrough
        let trims = historyRows.garbageRows >= trimStep || historyRows.garbageBytes >= trimStepBytes
            || (historyRows.isEmpty && historyRows.garbageRows > 0)
        // Set once COMMIT returned: a failure after it is no full disk to retry.
        var committed = false
        do throws(SQLiteError) {
            try statements.begin.run()
            do throws(SQLiteError) {
                try insertHistoryBatches(batches, after: keepAfter)
                for batch in batches where touchesLeases {
                    for change in batch.changes { try writeLeases(of: change) }
                }
                for (name, edit) in zip(order, edits) { try write(name, edit, lastSeq: lastSeq) }
                // The newest history row says the seq; meta only needs it
                // when no row is kept, or rows are deleted.
                if trims {
                    try deleteHistory(through: keepAfter, seq: lastSeq)
                } else if historyRows.isEmpty {
                    statements.setSeq.bind(1, Int64(bitPattern: lastSeq))
                    try statements.setSeq.run()
                }
                try statements.commit.run()
                committed = true
                try connection.flushWAL()
                historyRows.endWrite()
                historyRows.wrote(through: lastSeq)
                if trims { historyRows.trimmed() }
            } catch {
                try? statements.rollback.run()
                throw error
            }
        } catch where committed {
            throw StorageError("cannot commit to \(path)", error, retryable: false)
        } catch {
            historyRows.rollBack()
            // Rolled back, a whole object's leases are on disk again: it may have some (a superset is allowed).
            if touchesLeases {
                for batch in batches {
                    for change in batch.changes where change.path.isEmpty { leasedObjects.insert(change.object) }
                }
            }
            throw StorageError("cannot commit to \(path)", error)
        }
    }

    /// Brings one object's rows to its document (and modSeqs) after the batches.
    private func write(_ name: String, _ edit: ObjectEdit, lastSeq: UInt64) throws(SQLiteError) {
        guard let document = edit.document else {
            try run(statements.deleteMembers, name)
            try run(statements.deleteObject, name)
            return
        }
        let object = CanonicalName.nfc(name)
        let upsertObject = statements.upsertObject
        upsertObject.bind(1, object)
        upsertObject.bind(2, utf8: edit.modSeqs.map(Self.rootModSeqsJSON))
        upsertObject.bind(3, Int64(edit.modSeqs == nil ? 0 : 1))
        try upsertObject.run()
        if edit.rewritesAll {
            try run(statements.deleteMembers, name)
            for (index, key) in document.keys.enumerated() {
                try upsert(object, key, document[key]!, createdSeq: lastSeq, index: index, modSeqs: edit.modSeqs)
            }
            return
        }
        for key in edit.touched {
            if let value = document[key] {
                try upsert(object, key, value, createdSeq: edit.created[key] ?? lastSeq, index: 0, modSeqs: edit.modSeqs)
            } else {
                statements.deleteMember.bind(1, object)
                statements.deleteMember.bind(2, CanonicalName.nfc(key))
                try statements.deleteMember.run()
            }
        }
    }

    /// `object` is already in NFC; `modSeqs` is the object's tree (nil: unknown, the row's stay).
    private func upsert(_ object: String, _ key: String, _ value: JSONValue, createdSeq: UInt64,
                        index: Int, modSeqs: ModSeqTree?) throws(SQLiteError) {
        let upsert = statements.upsertMember
        upsert.bind(1, object)
        upsert.bind(2, CanonicalName.nfc(key))
        upsert.bind(3, Int64(bitPattern: createdSeq))
        upsert.bind(4, index)
        upsert.bind(5, utf8: value.jsonBytes)
        upsert.bind(6, utf8: modSeqs.flatMap { Self.modSeqsJSON(of: key, in: $0) })
        upsert.bind(7, Int64(modSeqs == nil ? 0 : 1))
        try upsert.run()
    }

    /// Writes `seq` to meta (no history row may say it once rows go) and
    /// deletes the history rows, a batch row only whole, at or before `through`.
    func deleteHistory(through: UInt64, seq: UInt64) throws(SQLiteError) {
        statements.setSeq.bind(1, Int64(bitPattern: seq))
        try statements.setSeq.run()
        for trim in [statements.trimHistory, statements.trimHistoryBatches] {
            trim.bind(1, Int64(bitPattern: through))
            try trim.run()
        }
    }

    func run(_ statement: SQLiteStatement, _ name: String) throws(SQLiteError) {
        statement.bind(1, CanonicalName.nfc(name))
        try statement.run()
    }
}

/// What a group of changes did to one object's top-level members: which it
/// touched, which it created (and when: that is their place), and whether
/// their order changed in a way rows cannot follow one by one.
struct ObjectEdit {
    /// The object after the changes; nil when it is gone.
    var document: JSONObject?
    /// Its modSeqs after the changes.
    var modSeqs: ModSeqTree?
    private(set) var touched: [String] = []
    private var isTouched: Set<String> = []
    /// Members that did not exist before their first change here, by the seq that made them.
    private(set) var created: [String: UInt64] = [:]
    private var removed: Set<String> = []
    /// The object was deleted, or a member removed then made again (so it
    /// moved to the end): every row is written anew.
    private(set) var rewritesAll = false

    mutating func add(_ change: ChangeRecord) {
        guard let key = change.path.first else {
            rewritesAll = true
            return
        }
        if touched.last != key, isTouched.insert(key).inserted { touched.append(key) }
        if change.existingKeys == 0 {
            if removed.contains(key) { rewritesAll = true }
            if created[key] == nil { created[key] = change.seq }
        }
        if change.path.count == 1 && change.kind == .setting && change.new == nil { removed.insert(key) }
    }
}
