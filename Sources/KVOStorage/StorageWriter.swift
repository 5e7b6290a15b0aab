import Foundation

/// The thread that commits, so that the event loop never waits for the disk.
///
/// The loop submits one ``CommitBatch`` per iteration that changed something.
/// The writer takes every batch queued since its last commit and writes them
/// in one transaction: while one sync runs, the next group gathers (group
/// commit). In `always` mode a ``CommitSyncer`` syncs the WAL on a thread of
/// its own, so the writer writes the next group while the last one syncs.
/// Once a batch is committed (in `always` mode: and synced) the last batch id
/// is published and `onProgress` called (kvod: `uv_async_send`, the one way
/// into the loop), and the loop releases the replies that waited for it.
///
/// The writer also checkpoints (copies the WAL into the database file) at
/// most ``checkpointInterval`` after the first commit since the last one,
/// instead of SQLite's automatic checkpoint every 1,000 pages: fewer
/// checkpoints, each off the commit path of the batch that crossed the
/// threshold. In `batch` mode commits are not synced; a ``WALSyncer`` syncs
/// the WAL within ``batchInterval`` of each, on a thread of its own. After a
/// failed commit or sync it publishes the failure and stops: nothing after
/// it can be trusted.
public final class StorageWriter: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`'s lock;
    // `database` is used only by the writer thread once `start` was called.

    /// How long `batch` mode lets a committed change wait for its sync.
    public static let batchInterval = 0.1
    /// How long committed changes wait in the WAL before a checkpoint.
    public static let checkpointInterval = 1.0

    /// How far the writer got.
    public struct Progress: Sendable, Equatable {
        /// The id of the last batch committed (0: none yet).
        public var committed: UInt64
        /// Why the writer stopped early, if it did.
        public var failure: String?
    }

    private let database: StateDatabase
    private let onProgress: @Sendable () -> Void
    /// Told how long each sync to the disk took (`metrics`' fsync latency).
    private let onSync: @Sendable (Duration) -> Void
    private let condition = NSCondition()
    private var queue: [CommitBatch] = []
    private var published = Progress(committed: 0, failure: nil)
    private var stopping = false
    private var finished = false
    /// `batch` mode's sync; nil in the other modes. Set by `start` before the thread exists.
    private var syncer: WALSyncer?
    /// `always` mode's sync; nil in the other modes. Set by `start` before the thread exists.
    private var commitSyncer: CommitSyncer?
    /// The database is in use, by the writer thread or ``commitHere(_:)``.
    private var databaseBusy = false
    /// The writer thread waits for ``commitHere(_:)`` to give the database back.
    private var waitsForDatabase = false
    /// When the first commit since the last checkpoint was made (nil: none since).
    private var uncheckpointedSince: Date?
    /// No commit since the start or the last checkpoint: the next commit is
    /// the writer thread's (SQLite may sync the WAL when it starts reusing
    /// it, and the writer then knows when the next checkpoint is due).
    private var checkpointed = true

    /// `onProgress` is called from the writer thread after each commit and on
    /// failure (also from the WAL syncer's thread, for a failed sync).
    /// `onSync` is told how long each sync took, from the thread that synced:
    /// the `fdatasync` of the commit syncer (`always`) or of the WAL syncer
    /// (`batch`); `off` never syncs.
    public init(database: StateDatabase, onSync: @escaping @Sendable (Duration) -> Void = { _ in },
                onProgress: @escaping @Sendable () -> Void) {
        self.database = database
        self.onSync = onSync
        self.onProgress = onProgress
    }

    /// Starts the thread (and the WAL syncer's in `batch` mode, the commit syncer's in `always`).
    public func start() {
        if database.syncMode == .batch {
            let syncer = WALSyncer(walPath: database.path + "-wal", interval: Self.batchInterval, onSync: onSync) {
                [weak self] failure in self?.publish(failure: failure)
            }
            syncer.start()
            self.syncer = syncer
        } else if database.syncMode == .always {
            let syncer = CommitSyncer(walPath: database.path + "-wal", onSync: onSync,
                                      onSynced: { [weak self] batch in self?.publish(committed: batch) },
                                      onFailure: { [weak self] failure in self?.publish(failure: failure) })
            syncer.start()
            commitSyncer = syncer
        }
        let thread = Thread { [self] in run() }
        thread.name = "kvod-storage"
        thread.start()
    }

    /// Queues a batch; its id must be greater than the previous one's.
    public func submit(_ batch: CommitBatch) {
        condition.lock()
        queue.append(batch)
        condition.signal()
        condition.unlock()
    }

    /// What the writer has committed, or why it stopped.
    public var progress: Progress {
        condition.lock()
        defer { condition.unlock() }
        return published
    }

    /// Commits what is queued, syncs, stops the thread and waits for it.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
        // The writer's last checkpoint synced what the syncer had not.
        syncer?.stop()
        commitSyncer?.stop()
    }

    // MARK: Committing on the caller's thread

    /// What ``commitHere(_:)`` did.
    public enum DirectCommit: Sendable, Equatable {
        /// Committed: in the operating system, the batch's output may leave.
        case committed
        /// Not attempted (the writer thread has work or the database, or the
        /// mode is `always`): submit the batch instead.
        case declined
        /// The commit failed: published like the writer's failures (`onProgress` was called).
        case failed
    }

    /// Commits `batch` on the calling thread (the event loop) when the
    /// writer thread is idle: nothing queued, not writing or checkpointing,
    /// and the first commit since the start or the last checkpoint made by
    /// the writer thread (SQLite may sync the WAL as it starts reusing it,
    /// and that commit sets the next checkpoint's deadline). In `batch` and
    /// `off` mode only: `always` syncs every commit on the commit syncer.
    /// Its id must follow the last batch's, like ``submit(_:)``'s. A large
    /// group under a pipelined load waits for its commit either way;
    /// committed here it skips the two thread wake-ups.
    public func commitHere(_ batch: CommitBatch) -> DirectCommit {
        guard commitSyncer == nil else { return .declined }
        condition.lock()
        guard queue.isEmpty, !databaseBusy, !stopping, !checkpointed, published.failure == nil else {
            condition.unlock()
            return .declined
        }
        databaseBusy = true
        condition.unlock()
        var failure: String?
        do {
            try database.write([batch])
        } catch {
            failure = error.description
        }
        if failure == nil { syncer?.noteCommit() }
        condition.lock()
        databaseBusy = false
        if let failure {
            published.failure = failure
        } else {
            published.committed = batch.id
        }
        // No wake-up otherwise: the writer thread made the first commit since the
        // last checkpoint, so it already waits for the next checkpoint's deadline.
        if failure != nil || waitsForDatabase { condition.signal() }
        condition.unlock()
        if failure != nil {
            onProgress()
            return .failed
        }
        return .committed
    }

    // MARK: The writer thread

    private func run() {
        while true {
            let (batches, stop, checkpointDue) = nextWork()
            // Whether this thread still has the database (it gives it back early after a commit alone).
            var holdsDatabase = true
            var failed = false
            do {
                if !batches.isEmpty {
                    try database.write(batches)
                    syncer?.noteCommit()
                    condition.lock()
                    if uncheckpointedSince == nil { uncheckpointedSince = Date() }
                    checkpointed = false
                    if commitSyncer == nil { published.committed = batches.last!.id }
                    // The database is free before the loop hears of the commit: its next group may be committed there.
                    if !checkpointDue && !stop {
                        databaseBusy = false
                        holdsDatabase = false
                    }
                    condition.unlock()
                    if let commitSyncer {
                        commitSyncer.noteCommit(through: batches.last!.id)
                    } else {
                        onProgress()
                    }
                }
                if checkpointDue || (stop && hasUncheckpointedCommits) {
                    try database.checkpoint()
                    condition.lock()
                    uncheckpointedSince = nil
                    checkpointed = true
                    condition.unlock()
                }
            } catch {
                publish(failure: error.description)
                failed = true
            }
            if holdsDatabase {
                condition.lock()
                databaseBusy = false
                condition.unlock()
            }
            if failed || (stop && batches.isEmpty) { break }
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private var hasUncheckpointedCommits: Bool {
        condition.lock()
        defer { condition.unlock() }
        return uncheckpointedSince != nil
    }

    /// Waits for batches, a stop, or the checkpoint deadline, while the
    /// database is free; takes every queued batch and the database.
    private func nextWork() -> (batches: [CommitBatch], stop: Bool, checkpointDue: Bool) {
        let interval = Self.checkpointInterval
        condition.lock()
        defer { condition.unlock() }
        while true {
            let deadline = uncheckpointedSince?.addingTimeInterval(interval)
            let due = deadline.map { Date() >= $0 } ?? false
            if !databaseBusy && (!queue.isEmpty || stopping || due || published.failure != nil) {
                databaseBusy = true
                let batches = published.failure == nil ? queue : []
                queue = []
                return (batches, stopping || published.failure != nil, due && published.failure == nil)
            }
            if databaseBusy {
                waitsForDatabase = true
                condition.wait()
                waitsForDatabase = false
            } else if let deadline {
                _ = condition.wait(until: deadline)
            } else {
                condition.wait()
            }
        }
    }

    private func publish(committed: UInt64? = nil, failure: String? = nil) {
        condition.lock()
        if let committed { published.committed = committed }
        // The first failure is the cause; a later one (a checkpoint on the way out) must not hide it.
        if let failure, published.failure == nil { published.failure = failure }
        condition.unlock()
        onProgress()
    }
}
