import CSQLite
import Foundation

/// A copy of `kvod.db` being made, a few pages at a time, into a file of the
/// data directory, by SQLite's online backup API (`sqlite3_backup_step`), on
/// the storage writer's thread between its commits.
///
/// The copy reads through kvod's own connection: its exclusive lock lets no
/// other in, which is why `sqlite3 kvod.db .backup` finds the database
/// locked. A commit made through that connection between two steps is
/// written into the pages already copied as well (SQLite does it for a
/// backup of the same connection), so the finished copy is the database as
/// it stood after the last commit before the last step: consistent, and
/// holding every change committed before the copy began. Writes wait for
/// one step at most, never for the whole copy.
final class SnapshotCopy {
    /// Where the copy is made; the file is unlinked once it is finished or given up.
    let path: String
    private var destination: SQLiteConnection?
    private var backup: OpaquePointer?
    /// The file's name is gone: nothing to unlink again (a later copy may have it).
    private var ended = false
    /// How the steps went: what a commit may have waited for.
    private var steps = SnapshotSteps()

    /// Starts a copy of `source` (kvod's connection, on the thread that uses
    /// it) into `path`, which is made anew, mode 0600 like `kvod.db`.
    init(of source: SQLiteConnection, into path: String) throws(StorageError) {
        self.path = path
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StorageError("cannot create \(path) for the backup's copy: \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        do throws(SQLiteError) {
            let destination = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
            // A scratch copy, read once and removed: no journal, no sync.
            try destination.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
            guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
                throw SQLiteError(code: sqlite3_extended_errcode(destination.handle), database: destination.handle)
            }
            self.destination = destination
            self.backup = backup
        } catch {
            unlink(path)
            throw StorageError("cannot start the backup's copy in \(path)", error)
        }
    }

    deinit {
        abandon()
    }

    /// Copies up to `pages` more pages; true once the copy is whole.
    func step(pages: Int32) throws(StorageError) -> Bool {
        guard let backup, let destination else { throw StorageError("the backup's copy in \(path) was given up") }
        let started = SnapshotSteps.now()
        let rc = sqlite3_backup_step(backup, pages)
        steps.record(since: started)
        switch rc & 0xFF {
        case SQLITE_DONE: return true
        // Only another connection could hold a lock; none can, but it would pass.
        case SQLITE_OK, SQLITE_BUSY, SQLITE_LOCKED: return false
        default: throw StorageError("cannot copy the database into \(path)", SQLiteError(code: rc, database: destination.handle))
        }
    }

    /// Ends a whole copy: makes it a database of its own (rollback journal,
    /// no `-wal` beside it: a file `sqlite3` and `kvod --restore` read alone),
    /// reads its seq, and returns it open and unlinked.
    func finish() throws(StorageError) -> DatabaseSnapshot {
        defer { abandon() }
        if let backup {
            self.backup = nil
            let rc = sqlite3_backup_finish(backup)
            guard rc == SQLITE_OK else {
                throw StorageError("cannot finish the backup's copy in \(path)", SQLiteError(code: rc, database: destination?.handle))
            }
        }
        destination = nil
        let seq: UInt64
        do {
            let copy = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
            // The copied header says WAL, as kvod.db's does. Exclusive: the WAL's
            // index in memory, no -shm; no sync: the copy is read once.
            try copy.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=OFF")
            guard try copy.text("PRAGMA journal_mode=DELETE") == "delete" else {
                throw StorageError("\(path) cannot be taken out of WAL mode")
            }
            seq = try BackupFile.lastSeq(copy)
        } catch {
            throw StorageError("cannot finish the backup's copy in \(path)", wrapping: error)
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StorageError("cannot open the backup's copy \(path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw StorageError("cannot read the size of the backup's copy \(path): \(reason)")
        }
        return DatabaseSnapshot(descriptor: descriptor, size: UInt64(status.st_size), seq: seq, steps: steps)
    }

    /// Gives the copy up (or lets its name go once finished): the file is removed.
    func abandon() {
        guard !ended else { return }
        ended = true
        if let backup {
            sqlite3_backup_finish(backup)
            self.backup = nil
        }
        destination = nil
        unlink(path)
    }
}
