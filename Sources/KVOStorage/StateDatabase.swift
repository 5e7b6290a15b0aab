import CSQLite
import Foundation
import KVOEngine

/// kvod's data directory: one SQLite database, `kvod.db`, in WAL mode.
///
/// It holds the current document of every object, the last seq, and the
/// newest changes (at most the history capacity): a compacted state, not an
/// ever-growing log. The schema is in docs/DURABILITY.md.
///
/// The connection uses `locking_mode=EXCLUSIVE`: kvod holds the database lock
/// from start to exit, so a second kvod on the same directory is refused
/// instead of interleaving its writes, and no `-shm` file is needed.
///
/// Opened and loaded on the main thread, then used by the storage writer
/// thread only.
public final class StateDatabase {
    /// The database file inside the data directory.
    public static let fileName = "kvod.db"
    /// `PRAGMA user_version` of the schema this kvod writes.
    public static let schemaVersion: Int64 = 1

    public let path: String
    public let syncMode: SyncMode
    /// The most changes kept in the history table.
    public let historyCapacity: Int
    let connection: SQLiteConnection
    private let statements: Statements

    /// Opens the database in `directory` (creating both if needed).
    public init(directory: String, syncMode: SyncMode, historyCapacity: Int) throws(StorageError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StorageError("cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        path = directory + "/" + Self.fileName
        self.syncMode = syncMode
        self.historyCapacity = historyCapacity
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            throw StorageError("cannot open \(path)", error)
        }
        try Self.configure(connection, path: path, syncMode: syncMode)
        do {
            statements = try Statements(connection)
        } catch {
            throw StorageError("cannot prepare statements on \(path)", error)
        }
    }

    private static func configure(_ connection: SQLiteConnection, path: String,
                                  syncMode: SyncMode) throws(StorageError) {
        do {
            try connection.execute("PRAGMA locking_mode=EXCLUSIVE")
            // Takes the lock now: the WAL switch reads the database.
            guard try connection.text("PRAGMA journal_mode=WAL") == "wal" else {
                throw StorageError("\(path) cannot be put in WAL mode")
            }
            try connection.execute("""
                PRAGMA synchronous=\(syncMode.synchronousPragma);
                PRAGMA journal_size_limit=\(64 << 20);
                BEGIN EXCLUSIVE;
                COMMIT;
                """)
            let version = try connection.integer("PRAGMA user_version") ?? 0
            switch version {
            case 0:
                try connection.execute(schema)
            case schemaVersion:
                break
            default:
                throw StorageError("\(path) has schema version \(version); this kvod reads version \(schemaVersion)")
            }
        } catch let error as StorageError {
            throw error
        } catch let error as SQLiteError where error.isBusy {
            throw StorageError("\(path) is in use by another process (another kvod on the same --data-dir?)")
        } catch let error as SQLiteError {
            throw StorageError("cannot set up \(path)", error)
        } catch {
            throw StorageError("cannot set up \(path): \(error)")
        }
    }

    /// Version 1. `key_path` is dotted (`''`: the whole object); `old`/`new`
    /// are JSON text, NULL when the value was absent; `indexes` is a JSON array.
    static let schema = """
        BEGIN;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE objects (name TEXT PRIMARY KEY, document TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE history (
            seq INTEGER PRIMARY KEY,
            object TEXT NOT NULL,
            key_path TEXT NOT NULL,
            kind TEXT NOT NULL,
            indexes TEXT,
            old TEXT,
            new TEXT,
            existing_keys INTEGER NOT NULL,
            member_index INTEGER
        );
        INSERT INTO meta (key, value) VALUES ('seq', 0);
        PRAGMA user_version = 1;
        COMMIT;
        """

    // MARK: Writing

    /// Commits `batches` in one transaction: their changes into the history
    /// (trimmed to the capacity), each touched object's latest document, the
    /// last seq. Durable on return in `always` mode.
    public func write(_ batches: [CommitBatch]) throws(StorageError) {
        guard let lastSeq = batches.last?.changes.last?.seq else { return }
        let keepAfter = lastSeq > UInt64(historyCapacity) ? lastSeq - UInt64(historyCapacity) : 0
        var documents: [String: JSONObject?] = [:]
        for batch in batches {
            for (name, document) in batch.documents { documents[name] = .some(document) }
        }
        do throws(SQLiteError) {
            try statements.begin.run()
            do throws(SQLiteError) {
                for batch in batches {
                    for change in batch.changes where change.seq > keepAfter { try insertHistory(change) }
                }
                for (name, document) in documents { try writeObject(name, document) }
                statements.trimHistory.bind(1, Int64(bitPattern: keepAfter))
                try statements.trimHistory.run()
                statements.setSeq.bind(1, Int64(bitPattern: lastSeq))
                try statements.setSeq.run()
                try statements.commit.run()
            } catch {
                try? statements.rollback.run()
                throw error
            }
        } catch {
            throw StorageError("cannot commit to \(path)", error)
        }
    }

    private func insertHistory(_ change: Change) throws(SQLiteError) {
        let insert = statements.insertHistory
        insert.bind(1, Int64(bitPattern: change.seq))
        insert.bind(2, change.object)
        insert.bind(3, change.path.joined(separator: "."))
        insert.bind(4, change.kind.rawValue)
        insert.bind(5, utf8: change.kind == .setting ? nil : JSONValue.array(change.indexes.map { .number(JSONNumber($0)) }).jsonBytes)
        insert.bind(6, utf8: change.old?.jsonBytes)
        insert.bind(7, utf8: change.new?.jsonBytes)
        insert.bind(8, change.existingKeys)
        insert.bind(9, change.memberIndex)
        try insert.run()
    }

    private func writeObject(_ name: String, _ document: JSONObject?) throws(SQLiteError) {
        if let document {
            statements.upsertObject.bind(1, name)
            statements.upsertObject.bind(2, utf8: JSONValue.object(document).jsonBytes)
            try statements.upsertObject.run()
        } else {
            statements.deleteObject.bind(1, name)
            try statements.deleteObject.run()
        }
    }

    /// Forces what is committed to the disk (`batch` mode's periodic sync):
    /// a checkpoint syncs the WAL, copies it into the database file and syncs that.
    public func sync() throws(StorageError) {
        do {
            try connection.checkpoint()
        } catch {
            throw StorageError("cannot sync \(path)", error)
        }
    }
}

/// The statements of the write path, compiled once.
private struct Statements {
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let rollback: SQLiteStatement
    let insertHistory: SQLiteStatement
    let upsertObject: SQLiteStatement
    let deleteObject: SQLiteStatement
    let trimHistory: SQLiteStatement
    let setSeq: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        insertHistory = try connection.prepare("""
            INSERT INTO history (seq, object, key_path, kind, indexes, old, new, existing_keys, member_index)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        upsertObject = try connection.prepare("INSERT OR REPLACE INTO objects (name, document) VALUES (?, ?)")
        deleteObject = try connection.prepare("DELETE FROM objects WHERE name = ?")
        trimHistory = try connection.prepare("DELETE FROM history WHERE seq <= ?")
        setSeq = try connection.prepare("UPDATE meta SET value = ? WHERE key = 'seq'")
    }
}
