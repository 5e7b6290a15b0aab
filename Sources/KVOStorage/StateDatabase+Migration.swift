import KVOEngine

/// Version 1 → 2: the quarantine table, and every name in NFC.
extension StateDatabase {
    /// The rows a load could not read, moved aside with the reason. `source`
    /// says where a row was: `members` (`key` the member, `seq` its
    /// created_seq, `value` its value) or `history` (`key` the key path,
    /// `seq` its seq, `value` and `old` its new and old values).
    static let quarantineTable = """
        CREATE TABLE quarantine (
            id INTEGER PRIMARY KEY,
            reason TEXT NOT NULL,
            source TEXT NOT NULL,
            object TEXT NOT NULL,
            key TEXT,
            seq INTEGER,
            value TEXT,
            old TEXT
        )
        """

    /// Version 1 stored names as clients spelled them, so canonically equal
    /// spellings of one object could have rows of their own. Each row is
    /// renamed to NFC; where two rows become one member, the one created
    /// later stays: it was written after the other spelling existed, so it
    /// is the one the engine held last. (A member deleted through one spelling
    /// while a row under another was left behind cannot be told from one
    /// never deleted; such a value comes back once, as it did before.)
    static func migrateFromVersion1(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.transaction("BEGIN") { () throws(SQLiteError) in
            try connection.execute(quarantineTable)
            try canonicalizeObjects(connection)
            try canonicalizeMembers(connection)
            try canonicalizeHistory(connection)
            try dropNonCanonicalModSeqs(connection)
            try connection.execute("PRAGMA user_version = 2")
        }
    }

    private static func canonicalizeObjects(_ connection: SQLiteConnection) throws(SQLiteError) {
        let select = try connection.prepare("SELECT name FROM objects")
        var renames: [(String, String)] = []
        while try select.step() {
            let name = select.text(0) ?? ""
            let canonical = CanonicalName.nfc(name)
            if canonical.utf8.elementsEqual(name.utf8) == false { renames.append((name, canonical)) }
        }
        let insert = try connection.prepare("INSERT OR IGNORE INTO objects (name) VALUES (?)")
        let delete = try connection.prepare("DELETE FROM objects WHERE name = ?")
        for (name, canonical) in renames {
            insert.bind(1, canonical)
            try insert.run()
            delete.bind(1, name)
            try delete.run()
        }
    }

    private static func canonicalizeMembers(_ connection: SQLiteConnection) throws(SQLiteError) {
        let select = try connection.prepare("SELECT object, key, created_seq FROM members")
        var renames: [(object: String, key: String, createdSeq: Int64)] = []
        while try select.step() {
            let object = select.text(0) ?? "", key = select.text(1) ?? ""
            if !CanonicalName.nfc(object).utf8.elementsEqual(object.utf8)
                || !CanonicalName.nfc(key).utf8.elementsEqual(key.utf8) {
                renames.append((object, key, select.int64(2)))
            }
        }
        let existing = try connection.prepare("SELECT created_seq FROM members WHERE object = ? AND key = ?")
        let delete = try connection.prepare("DELETE FROM members WHERE object = ? AND key = ?")
        let rename = try connection.prepare("UPDATE members SET object = ?, key = ? WHERE object = ? AND key = ?")
        for row in renames {
            let object = CanonicalName.nfc(row.object), key = CanonicalName.nfc(row.key)
            existing.bind(1, object)
            existing.bind(2, key)
            let other = try existing.step() ? existing.int64(0) : nil
            existing.reset()
            // Two spellings of one member: the later-created row wins.
            if let other {
                let loser = other >= row.createdSeq ? (row.object, row.key) : (object, key)
                delete.bind(1, loser.0)
                delete.bind(2, loser.1)
                try delete.run()
                if other >= row.createdSeq { continue }
            }
            rename.bind(1, object)
            rename.bind(2, key)
            rename.bind(3, row.object)
            rename.bind(4, row.key)
            try rename.run()
        }
    }

    private static func canonicalizeHistory(_ connection: SQLiteConnection) throws(SQLiteError) {
        let select = try connection.prepare("SELECT seq, object, key_path FROM history")
        var renames: [(seq: Int64, object: String, keyPath: String)] = []
        while try select.step() {
            let object = select.text(1) ?? "", keyPath = select.text(2) ?? ""
            if !CanonicalName.nfc(object).utf8.elementsEqual(object.utf8)
                || !CanonicalName.nfc(keyPath).utf8.elementsEqual(keyPath.utf8) {
                renames.append((select.int64(0), object, keyPath))
            }
        }
        let update = try connection.prepare("UPDATE history SET object = ?, key_path = ? WHERE seq = ?")
        for row in renames {
            update.bind(1, CanonicalName.nfc(row.object))
            update.bind(2, CanonicalName.nfc(row.keyPath))
            update.bind(3, row.seq)
            try update.run()
        }
    }

    /// A kvod that kept modSeqs may have left rows under another spelling.
    /// They are metadata: every row of such an object is dropped, and its
    /// modSeqs start again at the saved seq (what a missing row means).
    private static func dropNonCanonicalModSeqs(_ connection: SQLiteConnection) throws(SQLiteError) {
        guard try connection.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'mod_seqs'") == 1 else { return }
        let select = try connection.prepare("SELECT object, key FROM mod_seqs")
        var objects: Set<[UInt8]> = []
        while try select.step() {
            let object = select.text(0) ?? "", key = select.text(1) ?? ""
            let canonical = CanonicalName.nfc(object)
            if !canonical.utf8.elementsEqual(object.utf8) || !CanonicalName.nfc(key).utf8.elementsEqual(key.utf8) {
                objects.insert(Array(object.utf8))
                objects.insert(Array(canonical.utf8))
            }
        }
        let delete = try connection.prepare("DELETE FROM mod_seqs WHERE object = ?")
        for object in objects {
            delete.bind(1, utf8: object)
            try delete.run()
        }
    }
}
