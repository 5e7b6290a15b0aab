import CSQLite
import CSQLiteGather

/// One SQLite database connection (`sqlite3*`). Not thread-safe by itself:
/// kvod opens it on the main thread, then only the storage writer thread
/// uses it (SQLite is built thread-safe, so handing it over is allowed).
final class SQLiteConnection {
    let handle: OpaquePointer

    /// Process-wide settings, made once before the first open.
    private static let configured: Void = { _ = kvod_sqlite_disable_memory_statistics() }()

    /// Opens (creating if needed) the database file at `path`, through the
    /// VFS that writes a commit's WAL frames at once (`CSQLiteGather`) when
    /// it could be registered, else SQLite's default one.
    convenience init(path: String) throws(SQLiteError) {
        try self.init(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      vfs: kvod_gather_vfs_name())
    }

    /// Opens `path` (a file name, or a `file:` URI with `SQLITE_OPEN_URI`)
    /// with `flags`, through SQLite's default VFS when `vfs` is nil: the
    /// files kvod makes or reads beside its database (a backup's copy).
    init(path: String, flags: Int32, vfs: UnsafePointer<CChar>? = nil) throws(SQLiteError) {
        _ = Self.configured
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags, vfs)
        guard rc == SQLITE_OK, let handle else {
            let error = SQLiteError(code: rc, database: handle)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        self.handle = handle
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Closing leaves the WAL file as it is: without this, the last connection
    /// to close copies the WAL into the database file (a checkpoint).
    func keepWALOnClose() {
        _ = kvod_sqlite_no_checkpoint_on_close(handle)
    }

    /// Writes the WAL frames the VFS still holds (none after a commit, whose
    /// commit frame writes them; this makes sure of it before a reply leaves).
    func flushWAL() throws(SQLiteError) {
        let rc = kvod_gather_flush(UnsafeMutableRawPointer(handle))
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, database: handle) }
    }

    /// Runs one or more statements that return no rows worth reading.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw SQLiteError(code: rc, message: text)
        }
    }

    /// Runs `body` in a transaction begun with `begin`: committed when it
    /// returns, rolled back when it throws.
    func transaction(_ begin: String = "BEGIN IMMEDIATE", _ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try execute(begin)
        do throws(SQLiteError) {
            try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Compiles one statement, to run many times.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// The first column of the first row of `sql` as an integer (PRAGMA, COUNT).
    func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// The first column of the first row of `sql` as text.
    func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Copies every WAL frame into the database file: the WAL is synced
    /// first (unless `synchronous=OFF`), then the database file. The
    /// corresponding C function is `sqlite3_wal_checkpoint_v2`.
    func checkpoint() throws(SQLiteError) {
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, database: handle) }
    }
}
