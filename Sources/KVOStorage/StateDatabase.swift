import CSQLite
import Foundation
import KVOEngine

/// kvod's data directory: one SQLite database, `kvod.db`, in WAL mode.
///
/// It holds the current value of every object, member by member, the last
/// seq, and the newest changes (within the history limits, by count and by
/// bytes): a compacted state, not an ever-growing log. The schema is in docs/DURABILITY.md.
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
    public static let schemaVersion: Int64 = 6
    /// Where a `backup`'s copy is made, beside the database (``SnapshotCopy``);
    /// unlinked once made, so a file of that name is left only by a kvod that
    /// was stopped while it made one, and is removed at the next start.
    static let snapshotFileName = "kvod-backup.tmp"

    public let path: String
    /// The data directory that holds it (and the reserve file, ``StorageReserve``).
    public let directory: String
    /// Where a `backup`'s copy is made (``snapshotFileName``).
    let snapshotPath: String
    public let syncMode: SyncMode
    /// How many changes, and how many bytes of them, the history table keeps
    /// (the rule the engine's history follows too).
    public let historyLimits: HistoryLimits
    let connection: SQLiteConnection
    let statements: Statements
    /// The rows the history keeps, and those that fell out but are not
    /// deleted yet. Deleting in steps rather than at every commit keeps each
    /// commit to fewer pages (what an fsync costs): the table holds at most
    /// ``trimStep`` rows and ``trimStepBytes`` bytes more than the limits.
    var historyRows: HistoryRows
    /// What the last ``load()`` moved to the quarantine table, one line each
    /// (empty when every row was read).
    public internal(set) var quarantined: [String] = []
    /// What is wrong with the data directory but does not stop kvod (others
    /// may write in it), one line each, for the log.
    public private(set) var warnings: [String] = []
    /// Objects that may have rows in `leases` (a superset): a change to any
    /// other has no lease to end, so its commit skips that delete.
    var leasedObjects: Set<String> = []
    /// Encodes the history batch rows (kept to reuse its buffers' capacity).
    var historyEncoder = HistoryBatchEncoder()
    /// The database's page size, in bytes (what a free page holds).
    let pageSize: Int
    var trimStep: Int { min(1024, max(1, historyLimits.maxChanges / 8)) }
    var trimStepBytes: Int { max(1, historyLimits.maxBytes / 8) }

    /// Opens the database in `directory` (creating both if needed: the
    /// directory 0700, the files 0600). The history keeps at most
    /// `historyCapacity` changes and `historyBytes` bytes of them.
    public init(directory: String, syncMode: SyncMode, historyCapacity: Int,
                historyBytes: Int = HistoryLimits.defaultMaxBytes) throws(StorageError) {
        if let warning = try DataDirectoryFiles.prepareDirectory(directory) { warnings.append(warning) }
        path = directory + "/" + Self.fileName
        self.directory = directory
        snapshotPath = directory + "/" + Self.snapshotFileName
        self.syncMode = syncMode
        historyLimits = HistoryLimits(maxChanges: historyCapacity, maxBytes: historyBytes)
        historyRows = HistoryRows(limits: historyLimits)
        try DataFormatVersion.refuseNewer(path)
        try DataDirectoryFiles.prepareDatabaseFile(path, in: directory)
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            throw StorageError("cannot open \(path)", error)
        }
        try Self.configure(connection, path: path, syncMode: syncMode)
        // Only with the lock: another kvod's copy is not ours to remove.
        unlink(snapshotPath)
        do {
            statements = try Statements(connection)
            leasedObjects = try Self.leasedObjects(connection)
            pageSize = Int(try connection.integer("PRAGMA page_size") ?? 4096)
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
                PRAGMA wal_autocheckpoint=0;
                BEGIN EXCLUSIVE;
                COMMIT;
                """)
            let version = try connection.integer("PRAGMA user_version") ?? 0
            switch version {
            case 0:
                try connection.execute(schema)
                // The epoch of this data directory's history: 64 random bits, written once.
                let epoch = Int64.random(in: .min ... .max)
                try connection.execute("INSERT INTO meta (key, value) VALUES ('epoch', \(epoch))")
            case 1:
                try migrateFromVersion1(connection)
                fallthrough
            case 2:
                try migrateFromVersion2(connection)
                fallthrough
            case 3:
                try migrateFromVersion3(connection)
                fallthrough
            case 4:
                try migrateFromVersion4(connection)
                fallthrough
            case 5:
                try migrateFromVersion5(connection)
            case schemaVersion:
                break
            default:
                // A newer kvod's WAL: closing must not copy it into the database file.
                connection.keepWALOnClose()
                throw DataFormatVersion.refusal(path, version: version)
            }
        } catch let error as SQLiteError where error.isBusy {
            throw StorageError("\(path) is in use by another process (another kvod on the same --data-dir?)")
        } catch {
            throw StorageError("cannot set up \(path)", wrapping: error)
        }
    }

    /// Version 3. An object's members are rows of `members`, so that a commit
    /// rewrites the top-level members it touched, not whole documents;
    /// `created_seq`, `created_index` keep members in the order they were
    /// first written. `objects` lists every object, also those that are `{}`.
    /// The last seq is the newest history row's, or `meta.seq` when that is
    /// larger (no row is kept, or the rows were trimmed: `meta.seq` is written
    /// whenever rows are deleted); the history is a row per run of changes in
    /// `history_batches` (``HistoryBatchCodec``; `history`, a row per change,
    /// holds what versions 1 and 2 wrote); `meta.epoch` names the history (16 hex digits
    /// on the wire). Values are JSON text; in `history`, `old` and
    /// `new` are NULL when the value was absent and `key_path` is dotted (`''`:
    /// the whole object). Names and key paths are stored in NFC
    /// (``CanonicalName``). `quarantine` holds the rows a load could not
    /// read, moved aside so that kvod starts (``StateDatabase/load()``).
    static let schema = """
        BEGIN;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE objects (name TEXT PRIMARY KEY, mod_seqs TEXT) WITHOUT ROWID;
        CREATE TABLE members (
            object TEXT NOT NULL,
            key TEXT NOT NULL,
            created_seq INTEGER NOT NULL,
            created_index INTEGER NOT NULL,
            value TEXT NOT NULL,
            mod_seqs TEXT,
            PRIMARY KEY (object, key)
        ) WITHOUT ROWID;
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
        \(quarantineTable);
        \(historyBatchSchema);
        INSERT INTO meta (key, value) VALUES ('seq', 0);
        PRAGMA user_version = 6;
        COMMIT;
        """

    /// Copies the WAL into the database file. Unless `synchronous=OFF`, it
    /// syncs the WAL first and the database file after: `batch` mode's sync.
    public func checkpoint() throws(StorageError) {
        do {
            try connection.checkpoint()
        } catch {
            throw StorageError("cannot checkpoint \(path)", error)
        }
    }
}

/// The statements of the write path, compiled once.
struct Statements {
    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let rollback: SQLiteStatement
    let insertHistoryBatch: SQLiteStatement
    let trimHistory: SQLiteStatement
    let trimHistoryBatches: SQLiteStatement
    let setSeq: SQLiteStatement
    let upsertObject: SQLiteStatement
    let deleteObject: SQLiteStatement
    let upsertMember: SQLiteStatement
    let deleteMember: SQLiteStatement
    let deleteMembers: SQLiteStatement
    let deleteLeases: SQLiteStatement
    let insertLease: SQLiteStatement
    /// The database's free pages (``StateDatabase/freePageBytes()``).
    let freelistCount: SQLiteStatement

    init(_ connection: SQLiteConnection) throws(SQLiteError) {
        try StateDatabase.addMissingTables(connection)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commit = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        insertHistoryBatch = try connection.prepare(
            "INSERT INTO history_batches (last_seq, first_seq, changes) VALUES (?, ?, ?)")
        trimHistory = try connection.prepare("DELETE FROM history WHERE seq <= ?")
        trimHistoryBatches = try connection.prepare("DELETE FROM history_batches WHERE last_seq <= ?")
        setSeq = try connection.prepare("UPDATE meta SET value = ? WHERE key = 'seq'")
        // ?3 = 0: the commit does not know the object's modSeqs, which stay as they are.
        upsertObject = try connection.prepare("""
            INSERT INTO objects (name, mod_seqs) VALUES (?1, ?2)
            ON CONFLICT (name) DO UPDATE SET mod_seqs = excluded.mod_seqs WHERE ?3
            """)
        deleteObject = try connection.prepare("DELETE FROM objects WHERE name = ?")
        // A member that exists keeps its place; only its value (and modSeqs, unless ?7 = 0) changes.
        upsertMember = try connection.prepare("""
            INSERT INTO members (object, key, created_seq, created_index, value, mod_seqs) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (object, key) DO UPDATE SET value = excluded.value,
                mod_seqs = CASE WHEN ?7 THEN excluded.mod_seqs ELSE members.mod_seqs END
            """)
        deleteMember = try connection.prepare("DELETE FROM members WHERE object = ? AND key = ?")
        deleteMembers = try connection.prepare("DELETE FROM members WHERE object = ?")
        // At or under a key path: the path itself, or one that continues it after a dot
        // (between "p." and "p/", "/" being the byte after ".").
        deleteLeases = try connection.prepare("""
            DELETE FROM leases WHERE object = ?1
            AND (?2 = '' OR key_path = ?2 OR (key_path >= ?2 || '.' AND key_path < ?2 || '/'))
            """)
        insertLease = try connection.prepare("""
            INSERT OR REPLACE INTO leases (object, key_path, ephemeral, deadline_ms) VALUES (?, ?, ?, ?)
            """)
        freelistCount = try connection.prepare("PRAGMA freelist_count")
    }
}
