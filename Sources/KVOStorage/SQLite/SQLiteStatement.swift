import CSQLite

/// A compiled statement (`sqlite3_stmt*`): bind parameters (1-based), step
/// through rows, read columns (0-based), reset, run again.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw SQLiteError(code: rc, database: connection.handle) }
        self.statement = statement
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(statement)
    }

    // MARK: Binding

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(statement, index, value)
    }

    func bind(_ index: Int32, _ value: Int?) {
        if let value { sqlite3_bind_int64(statement, index, Int64(value)) } else { sqlite3_bind_null(statement, index) }
    }

    func bind(_ index: Int32, _ text: String) {
        // A native string's own bytes, not a copy in an array first (SQLite copies them).
        var text = text
        text.withUTF8 { bytes in
            withUnsafeBytes(of: UInt8(0)) { empty in
                let base = UnsafeRawPointer(bytes.baseAddress) ?? empty.baseAddress
                _ = sqlite3_bind_text(statement, index, base?.assumingMemoryBound(to: CChar.self),
                                      Int32(bytes.count), kvod_sqlite_transient())
            }
        }
    }

    /// Binds UTF-8 bytes as text, or NULL when nil.
    func bind(_ index: Int32, utf8 bytes: [UInt8]?) {
        guard let bytes else {
            sqlite3_bind_null(statement, index)
            return
        }
        // An empty array may have no base address, and a NULL pointer would bind NULL, not ''.
        let nonEmpty = bytes.isEmpty ? [0] : bytes
        nonEmpty.withUnsafeBytes { raw in
            _ = sqlite3_bind_text(statement, index, raw.baseAddress?.assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), kvod_sqlite_transient())
        }
    }

    /// Binds bytes as a blob (copied: they need not outlive the call).
    func bind(_ index: Int32, blob bytes: UnsafeRawBufferPointer) {
        // A NULL pointer would bind NULL, not an empty blob.
        withUnsafeBytes(of: UInt8(0)) { empty in
            _ = sqlite3_bind_blob(statement, index, bytes.baseAddress ?? empty.baseAddress, Int32(bytes.count),
                                  kvod_sqlite_transient())
        }
    }

    // MARK: Running

    /// Runs to the next row: true when a row is ready, false when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw SQLiteError(code: rc, database: connection.handle)
        }
    }

    /// Runs a statement that returns no rows, then resets it for the next run.
    func run() throws(SQLiteError) {
        defer { reset() }
        try step()
    }

    /// Makes the statement ready to run again; bindings are cleared.
    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    // MARK: Columns

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    /// The column's text (all of it: an embedded NUL does not end it), or nil for NULL.
    func text(_ column: Int32) -> String? {
        bytes(column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The column's bytes as a blob, or nil for NULL.
    func blob(_ column: Int32) -> [UInt8]? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
        // The pointer first: sqlite3_column_bytes then counts the bytes it points to.
        guard let pointer = sqlite3_column_blob(statement, column) else { return [] }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column's text as bytes, or nil for NULL.
    func bytes(_ column: Int32) -> [UInt8]? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }
}
