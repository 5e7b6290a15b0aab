import Foundation

/// `batch` mode's sync, on a thread of its own: at most
/// ``StorageWriter/batchInterval`` after a commit, the WAL file is
/// `fdatasync`ed, so what was acknowledged reaches the disk within about that
/// long.
///
/// Why not the checkpoint: it also syncs the WAL, but it runs on the writer
/// thread and copies every changed page into the database file, and no
/// commit (so no reply) could leave while it ran (the figures:
/// docs/DURABILITY.md). Syncing a file through a descriptor of its own
/// covers every write made to that file before it, whoever made them.
final class WALSyncer: @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `condition`'s lock.
    private let walPath: String
    private let interval: Double
    private let onFailure: @Sendable (String) -> Void
    private let onSync: @Sendable (Duration) -> Void
    private let condition = NSCondition()
    /// When the oldest commit not yet synced was made; nil: all synced.
    private var firstUnsynced: Date?
    private var stopping = false
    private var finished = false

    /// `onFailure` is called once, from the syncer thread, if a sync fails;
    /// the syncer stops then. `onSync` is told how long each sync took.
    init(walPath: String, interval: Double, onSync: @escaping @Sendable (Duration) -> Void = { _ in },
         onFailure: @escaping @Sendable (String) -> Void) {
        self.walPath = walPath
        self.interval = interval
        self.onSync = onSync
        self.onFailure = onFailure
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "kvod-wal-sync"
        thread.start()
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

    /// Stops the thread and waits for it; what is unsynced then is the
    /// caller's (the writer's last checkpoint syncs it).
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        // The WAL exists once the first commit is written, and SQLite keeps
        // the same file (it rewrites it from the start) while kvod runs.
        var descriptor: Int32 = -1
        while waitForDueSync() {
            if descriptor < 0 { descriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
            let started = ContinuousClock.now
            if descriptor < 0 || fdatasync(descriptor) != 0 {
                onFailure("cannot sync \(walPath): \(String(cString: strerror(errno)))")
                break
            }
            onSync(ContinuousClock.now - started)
        }
        if descriptor >= 0 { close(descriptor) }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until a sync is due (returns true, counting what is committed
    /// from now on as unsynced) or the syncer is stopped (false).
    private func waitForDueSync() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopping {
            if let first = firstUnsynced {
                let due = first.addingTimeInterval(interval)
                if Date() >= due || !condition.wait(until: due) {
                    firstUnsynced = nil
                    return true
                }
            } else {
                condition.wait()
            }
        }
        return false
    }
}
