import CSQLite
import Foundation

/// `kvod --data-dir DIR --restore FILE`: a new data directory made from a
/// backup, before kvod opens it as usual.
///
/// The backup is checked first (``BackupFile/verify(_:)``), and `DIR` must be
/// missing or empty: a restore never overwrites a data directory. The file is
/// copied in under a temporary name, given a new epoch, synced, and renamed
/// to `kvod.db`, so a restore cut short leaves no `kvod.db` behind (and the
/// next restore replaces what it left). The new
/// epoch is what makes the restored history a history of its own: the kvod
/// that was backed up went on past the backup's seq, and a client holding a
/// resume point of it must be told `compacted`, not replayed the restored
/// kvod's different changes under the same seqs.
public enum DataDirectoryRestore {
    /// Restores `file` into `directory`; returns what it holds.
    public static func restore(_ file: String, into directory: String) throws(StorageError) -> BackupFile.Contents {
        let contents = try BackupFile.verify(file)
        try refuseNonEmpty(directory)
        _ = try DataDirectoryFiles.prepareDirectory(directory)
        let target = directory + "/" + StateDatabase.fileName
        let partial = target + partialSuffix
        // A restore cut short left these: done again from the start.
        for leftover in partialNames { unlink(directory + "/" + leftover) }
        do {
            try copy(file, to: partial)
            try giveNewEpoch(partial)
        } catch {
            unlink(partial)
            unlink(partial + "-journal")
            throw error
        }
        guard rename(partial, target) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            throw StorageError("cannot rename \(partial) to \(target): \(reason)")
        }
        syncDirectory(directory)
        return contents
    }

    /// Takes back a restore that kvod could not start on (a file that passed
    /// ``BackupFile/verify(_:)`` but that kvod cannot open or load): the data
    /// directory is left as the restore found it, empty, for another try.
    public static func undo(in directory: String) {
        let target = directory + "/" + StateDatabase.fileName
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(target + suffix) }
        unlink(directory + "/" + StateDatabase.snapshotFileName)
    }

    /// The copy's name until it is whole.
    private static let partialSuffix = ".restoring"
    /// What a restore cut short may leave: its copy, and SQLite's files beside it.
    private static let partialNames = ["", "-journal", "-wal", "-shm"].map { StateDatabase.fileName + partialSuffix + $0 }

    private static func refuseNonEmpty(_ directory: String) throws(StorageError) {
        guard let found = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let entries = found.filter { !partialNames.contains($0) }
        guard entries.isEmpty else {
            let named = entries.sorted().prefix(3).joined(separator: ", ") + (entries.count > 3 ? ", …" : "")
            throw StorageError("""
                the data directory \(directory) is not empty (it holds \(named)): --restore makes a new data \
                directory and never overwrites one; move it aside, or restore into another --data-dir
                """)
        }
    }

    /// Copies `source` to `destination` (a new file, mode 0600) and syncs it.
    private static func copy(_ source: String, to destination: String) throws(StorageError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StorageError("cannot open \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw StorageError("cannot create \(destination): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw StorageError("cannot read \(source): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if step < 0, errno == EINTR { continue }
                guard step > 0 else {
                    throw StorageError("cannot write \(destination): \(String(cString: strerror(errno)))")
                }
                written += step
            }
        }
        guard fsync(output) == 0 else { throw StorageError("cannot sync \(destination): \(String(cString: strerror(errno)))") }
    }

    /// A new random epoch in `meta`, written and synced (rollback journal: a
    /// backup has no WAL, and kvod switches to WAL when it opens it).
    private static func giveNewEpoch(_ path: String) throws(StorageError) {
        do {
            let database = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
            // Exclusive: should the file say WAL (a kvod.db copied while kvod was
            // stopped), the WAL's index stays in memory and no -shm is left.
            try database.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=FULL")
            try database.execute("UPDATE meta SET value = \(Int64.random(in: .min ... .max)) WHERE key = 'epoch'")
        } catch {
            throw StorageError("cannot give \(path) a new epoch", error)
        }
    }

    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}
