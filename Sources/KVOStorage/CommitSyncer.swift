import Foundation

/// `always` mode's sync, on a thread of its own: the writer commits a group
/// to the WAL without syncing and goes on to the next group while this
/// thread `fdatasync`s the WAL; a batch counts as committed (its replies may
/// leave) once a sync that began after its commit has returned. One sync
/// covers every commit written before it began, so the next group's writing
/// overlaps the last group's sync instead of following it.
///
/// Safe for the same reason as ``WALSyncer``: SQLite in `synchronous=NORMAL`
/// syncs the WAL itself before a checkpoint and when it starts reusing the file.
final class CommitSyncer: WALSyncThread, @unchecked Sendable {
    private let onSynced: @Sendable (UInt64) -> Void
    /// The last batch written to the WAL, and the last one synced.
    private var written: UInt64 = 0
    private var synced: UInt64 = 0

    /// `onSynced` is told, from the syncer thread, the last batch each sync
    /// covered; `onFailure` once if a sync fails (the syncer stops then).
    /// ``stop()`` syncs what was noted and not yet synced first.
    init(walPath: String, onSync: @escaping @Sendable (Duration) -> Void,
         onSynced: @escaping @Sendable (UInt64) -> Void, onFailure: @escaping @Sendable (String) -> Void) {
        self.onSynced = onSynced
        super.init(walPath: walPath, threadName: "kvod-commit-sync", onSync: onSync, onFailure: onFailure)
    }

    /// Batches up to `batch` are in the WAL (called by the writer thread).
    func noteCommit(through batch: UInt64) {
        condition.lock()
        written = batch
        condition.signal()
        condition.unlock()
    }

    /// Waits for a commit not yet synced (returns the last batch written) or
    /// for a stop with nothing left to sync (nil).
    override func nextSync() -> UInt64? {
        condition.withLock {
            while written == synced && !stopping { condition.wait() }
            return written == synced ? nil : written
        }
    }

    override func didSync(_ target: UInt64) {
        condition.withLock { synced = target }
        onSynced(target)
    }
}
