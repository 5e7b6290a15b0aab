import CSQLite

/// A failed SQLite call: its result code and SQLite's message
/// (`sqlite3_errmsg`), e.g. `SQLITE_BUSY (5): database is locked`.
public struct SQLiteError: Error, CustomStringConvertible {
    /// The (extended) result code.
    public let code: Int32
    public let message: String

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    init(code: Int32, database: OpaquePointer?) {
        let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(code: code, message: message ?? String(cString: sqlite3_errstr(code)))
    }

    /// Another connection holds the database's lock.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

    /// The disk (or the filesystem's quota) had no room for what SQLite wrote.
    public var isFull: Bool { code & 0xFF == SQLITE_FULL }

    public var description: String { "\(message) (SQLite code \(code))" }
}
