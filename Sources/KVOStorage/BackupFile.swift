import CSQLite
import Foundation
import KVOBuildInfo
import KVOEngine

/// A backup of a data directory (`kvoctl backup`), or any copy of a
/// `kvod.db`, checked before anything trusts it: `kvoctl backup` before it
/// names the file, `kvod --restore` before it copies it in.
public enum BackupFile {
    /// What a backup holds, as its own tables say.
    public struct Contents: Sendable, Equatable {
        /// The seq of the last change it holds.
        public var seq: UInt64
        /// Its format (``StateDatabase/schemaVersion`` of the kvod that wrote it).
        public var schemaVersion: Int64
        /// How many objects it holds.
        public var objects: Int
    }

    /// Checks that `path` is a kvod database this kvod reads, whole, and
    /// says what it holds. Opened read-only and immutable: nothing is
    /// written, not even a `-wal` or `-journal` beside it.
    public static func verify(_ path: String) throws(StorageError) -> Contents {
        guard access(path, R_OK) == 0 else {
            throw StorageError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        // A fifo or a device would be waited on, or read forever.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw StorageError("\(path) is not a regular file: a backup is the file kvoctl backup wrote")
        }
        guard let version = DataFormatVersion.inHeader(of: path) else {
            throw StorageError("\(path) is not a kvod database: it is not an SQLite database")
        }
        guard version <= StateDatabase.schemaVersion else {
            throw StorageError("""
                \(path) has schema version \(version), written by a newer kvod; this kvod (\(BuildInfo.version)) reads \
                schema version \(StateDatabase.schemaVersion) and older: restore it with the newer kvod
                """)
        }
        guard version >= 1 else { throw StorageError("\(path) is an SQLite database but not kvod's (no schema version)") }
        if let size = fileSize(path + "-wal"), size > 0 {
            throw StorageError("""
                \(path)-wal exists beside it: \(path) looks like a copy of a running kvod's kvod.db, whose latest \
                changes are in that -wal file and not in \(path); take a backup with kvoctl backup instead
                """)
        }
        do {
            let file = try SQLiteConnection(path: uri(path), flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX)
            let check = try file.prepare("PRAGMA integrity_check(5)")
            var problems: [String] = []
            while try check.step() { problems.append(check.text(0) ?? "") }
            guard problems == ["ok"] else {
                throw StorageError("\(path) is damaged (SQLite's integrity check: \(problems.joined(separator: "; ")))")
            }
            for table in ["meta", "objects", "members"] where try !hasTable(file, table) {
                throw StorageError("\(path) is an SQLite database but not kvod's (no table \(table))")
            }
            guard try file.integer("SELECT COUNT(*) FROM meta WHERE key IN ('seq', 'epoch')") == 2 else {
                throw StorageError("\(path) is an SQLite database but not kvod's (no seq or epoch in its meta table)")
            }
            let objects = try file.integer("SELECT COUNT(*) FROM objects") ?? 0
            return Contents(seq: try lastSeq(file), schemaVersion: version, objects: Int(objects))
        } catch {
            throw StorageError("cannot read \(path) as a kvod database", wrapping: error)
        }
    }

    /// The seq of the last change a kvod database holds: its newest history
    /// row's, or `meta.seq` when that is larger, from the tables of whichever
    /// version wrote it (``StateDatabase/load()``'s too, once migrated).
    static func lastSeq(_ connection: SQLiteConnection) throws(SQLiteError) -> UInt64 {
        var sources = ["SELECT value FROM meta WHERE key = 'seq'"]
        if try hasTable(connection, "history") { sources.append("SELECT MAX(seq) FROM history") }
        if try hasTable(connection, "history_batches") { sources.append("SELECT MAX(last_seq) FROM history_batches") }
        let largest = try connection.integer("SELECT MAX(value) FROM (\(sources.joined(separator: " UNION ALL ")))")
        return UInt64(bitPattern: largest ?? 0)
    }

    private static func hasTable(_ connection: SQLiteConnection, _ name: String) throws(SQLiteError) -> Bool {
        try connection.integer("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '\(name)'") == 1
    }

    /// `file:` URI of `path`, immutable: SQLite then takes no lock and
    /// looks for no journal or WAL (`%`, `?` and `#` escaped).
    private static func uri(_ path: String) -> String {
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file:" + escaped + "?immutable=1"
    }

    private static func fileSize(_ path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }
}
