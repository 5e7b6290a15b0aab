import Foundation

/// A thread that `fdatasync`s the WAL file whenever its subclass says a sync
/// is due: ``CommitSyncer`` in `always` mode, ``WALSyncer`` in `batch` mode.
/// Syncing a file through a descriptor of its own covers every write made to
/// that file before it, whoever made them.
class WALSyncThread: @unchecked Sendable {
    // @unchecked: the mutable state, the subclasses' too, is guarded by `condition`'s lock.
    let walPath: String
    private let threadName: String
    private let onSync: @Sendable (Duration) -> Void
    private let onFailure: @Sendable (String) -> Void
    let condition = NSCondition()
    /// Set by ``stop()``: a subclass's ``nextSync()`` stops waiting on it.
    private(set) var stopping = false
    private var finished = false

    /// `onSync` is told how long each sync took; `onFailure` is called once,
    /// from the thread, if a sync fails (the thread stops then).
    init(walPath: String, threadName: String, onSync: @escaping @Sendable (Duration) -> Void,
         onFailure: @escaping @Sendable (String) -> Void) {
        self.walPath = walPath
        self.threadName = threadName
        self.onSync = onSync
        self.onFailure = onFailure
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = threadName
        thread.start()
    }

    /// Stops the thread once ``nextSync()`` says there is nothing left, and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// Waits until a sync is due and returns what it will cover (a batch, or
    /// 0), or nil once stopped with nothing to sync. Called without the lock.
    func nextSync() -> UInt64? { nil }

    /// After a sync that covered `target`, on the thread, without the lock.
    func didSync(_ target: UInt64) {}

    private func run() {
        // The WAL exists once the first commit is written, and SQLite keeps
        // the same file (it rewrites it from the start) while kvod runs.
        var descriptor: Int32 = -1
        while let target = nextSync() {
            if descriptor < 0 { descriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
            let started = ContinuousClock.now
            if descriptor < 0 || fdatasync(descriptor) != 0 {
                onFailure("cannot sync \(walPath): \(String(cString: strerror(errno)))")
                break
            }
            onSync(ContinuousClock.now - started)
            didSync(target)
        }
        if descriptor >= 0 { close(descriptor) }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}
