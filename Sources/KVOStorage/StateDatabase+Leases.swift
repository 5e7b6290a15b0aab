import KVOEngine
import KVOValues

/// Ephemeral values and deadlines on disk (a `leases` table), and the
/// `cause` of kvod's own deletions in the history: both added beside schema
/// version 1, on open, so that an older data directory opens as it is and an
/// older kvod ignores them.
extension StateDatabase {
    static let leaseSchema = """
        CREATE TABLE IF NOT EXISTS leases (
            object TEXT NOT NULL,
            key_path TEXT NOT NULL,
            ephemeral INTEGER NOT NULL,
            deadline_ms INTEGER,
            PRIMARY KEY (object, key_path)
        ) WITHOUT ROWID;
        """

    /// The tables and columns kvod added since schema version 1, made when missing.
    static func addMissingTables(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute(leaseSchema)
        let hasCause = try connection.integer("SELECT COUNT(*) FROM pragma_table_info('history') WHERE name = 'cause'")
        if hasCause == 0 { try connection.execute("ALTER TABLE history ADD COLUMN cause TEXT") }
    }

    /// Applies one change to the leases: a set or delete ends the leases at
    /// or under its key path; a set with a lease starts that one.
    func writeLeases(of change: ChangeRecord) throws(SQLiteError) {
        guard change.kind == .setting else { return }
        guard change.lease != nil || (!leasedObjects.isEmpty && leasedObjects.contains(change.object)) else { return }
        let object = CanonicalName.nfc(change.object)
        let path = CanonicalName.nfc(path: change.path)
        let delete = statements.deleteLeases
        delete.bind(1, object)
        delete.bind(2, path)
        try delete.run()
        if path.isEmpty { leasedObjects.remove(change.object) }
        guard let lease = change.lease, change.new != nil else { return }
        leasedObjects.insert(change.object)
        let insert = statements.insertLease
        insert.bind(1, object)
        insert.bind(2, path)
        insert.bind(3, lease.ephemeral ? 1 : 0)
        insert.bind(4, lease.deadline.map { Int(($0 * 1000).rounded(.up)) })
        try insert.run()
    }

    /// The objects with rows in `leases`, as the engine names them (Swift
    /// strings compare by canonical equivalence, so the stored NFC spelling
    /// matches every spelling of the name).
    static func leasedObjects(_ connection: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        var objects: Set<String> = []
        let rows = try connection.prepare("SELECT DISTINCT object FROM leases")
        while try rows.step() { objects.insert(rows.text(0) ?? "") }
        return objects
    }

    func loadLeases(of documents: [String: JSONObject]) throws -> [SavedLease] {
        var leases: [SavedLease] = []
        let rows = try connection.prepare("SELECT object, key_path, ephemeral, deadline_ms FROM leases")
        while try rows.step() {
            let object = rows.text(0) ?? ""
            guard documents[object] != nil else { continue }
            leases.append(SavedLease(object: object, keyPath: rows.text(1) ?? "", ephemeral: rows.int64(2) != 0,
                                     deadline: rows.isNull(3) ? nil : Double(rows.int64(3)) / 1000))
        }
        return leases
    }
}
