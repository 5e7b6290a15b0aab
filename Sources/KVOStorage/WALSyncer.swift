import Foundation

/// `batch` mode's sync, on a thread of its own: at most
/// ``StorageWriter/batchInterval`` after a commit, the WAL file is
/// `fdatasync`ed, so what was acknowledged reaches the disk within about that
/// long. ``stop()`` leaves what is unsynced to the caller (the writer's last
/// checkpoint syncs it).
///
/// Why not the checkpoint: it also syncs the WAL, but it runs on the writer
/// thread and copies every changed page into the database file, and no
/// commit (so no reply) could leave while it ran (the figures:
/// docs/DURABILITY.md).
final class WALSyncer: WALSyncThread, @unchecked Sendable {
    private let interval: Double
    /// When the oldest commit not yet synced was made; nil: all synced.
    private var firstUnsynced: Date?

    init(walPath: String, interval: Double, onSync: @escaping @Sendable (Duration) -> Void = { _ in },
         onFailure: @escaping @Sendable (String) -> Void) {
        self.interval = interval
        super.init(walPath: walPath, threadName: "kvod-wal-sync", onSync: onSync, onFailure: onFailure)
    }

    /// A commit was written to the WAL (called by the writer thread).
    func noteCommit() {
        condition.lock()
        if firstUnsynced == nil {
            firstUnsynced = Date()
            condition.signal()
        }
        condition.unlock()
    }

    /// Waits until a sync is due (counting what is committed from now on as
    /// unsynced) or the syncer is stopped (nil).
    override func nextSync() -> UInt64? {
        condition.lock()
        defer { condition.unlock() }
        while !stopping {
            if let first = firstUnsynced {
                let due = first.addingTimeInterval(interval)
                if Date() >= due || !condition.wait(until: due) {
                    firstUnsynced = nil
                    return 0
                }
            } else {
                condition.wait()
            }
        }
        return nil
    }
}
