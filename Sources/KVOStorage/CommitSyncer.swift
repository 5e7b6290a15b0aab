import Foundation

/// `always` mode's sync, on a thread of its own: the writer commits a group
/// to the WAL without syncing and goes on to the next group while this
/// thread `fdatasync`s the WAL; a batch counts as committed (its replies may
/// leave) once a sync that began after its commit has returned. One sync
/// covers every commit written before it began, so the next group's writing
/// overlaps the last group's sync instead of following it.
///
/// Safe for the same reason as ``WALSyncer``: a sync through a descriptor of
/// its own covers every write made to the file before it, and SQLite in
/// `synchronous=NORMAL` syncs the WAL itself before a checkpoint and when it
/// starts reusing the file.
final class CommitSyncer: @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `condition`'s lock.
    private let walPath: String
    private let onSync: @Sendable (Duration) -> Void
    private let onSynced: @Sendable (UInt64) -> Void
    private let onFailure: @Sendable (String) -> Void
    private let condition = NSCondition()
    /// The last batch written to the WAL, and the last one synced.
    private var written: UInt64 = 0
    private var synced: UInt64 = 0
    private var stopping = false
    private var finished = false

    /// `onSynced` is told, from the syncer thread, the last batch each sync
    /// covered; `onFailure` once if a sync fails (the syncer stops then).
    init(walPath: String, onSync: @escaping @Sendable (Duration) -> Void,
         onSynced: @escaping @Sendable (UInt64) -> Void, onFailure: @escaping @Sendable (String) -> Void) {
        self.walPath = walPath
        self.onSync = onSync
        self.onSynced = onSynced
        self.onFailure = onFailure
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "kvod-commit-sync"
        thread.start()
    }

    /// Batches up to `batch` are in the WAL (called by the writer thread).
    func noteCommit(through batch: UInt64) {
        condition.lock()
        written = batch
        condition.signal()
        condition.unlock()
    }

    /// Syncs what was noted and not yet synced, stops the thread and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        // The WAL exists once the first commit is written, and SQLite keeps
        // the same file while kvod runs.
        var descriptor: Int32 = -1
        while let target = nextTarget() {
            if descriptor < 0 { descriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
            let started = ContinuousClock.now
            if descriptor < 0 || fdatasync(descriptor) != 0 {
                onFailure("cannot sync \(walPath): \(String(cString: strerror(errno)))")
                break
            }
            onSync(ContinuousClock.now - started)
            condition.lock()
            synced = target
            condition.unlock()
            onSynced(target)
        }
        if descriptor >= 0 { close(descriptor) }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for a commit not yet synced (returns the last batch written) or
    /// for a stop with nothing left to sync (nil).
    private func nextTarget() -> UInt64? {
        condition.lock()
        defer { condition.unlock() }
        while written == synced && !stopping { condition.wait() }
        return written == synced ? nil : written
    }
}
