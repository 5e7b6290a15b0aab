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

    // MARK: The writer thread

    private func run() {
        let interval = Self.checkpointInterval
        var firstUncheckpointed: Date?
        while true {
            let (batches, stop) = nextBatches(checkpointDeadline: firstUncheckpointed?.addingTimeInterval(interval))
            do {
                if !batches.isEmpty {
                    try database.write(batches)
                    syncer?.noteCommit()
                    if firstUncheckpointed == nil { firstUncheckpointed = Date() }
                    if let commitSyncer {
                        commitSyncer.noteCommit(through: batches.last!.id)
                    } else {
                        publish(committed: batches.last!.id)
                    }
                }
                if let first = firstUncheckpointed, stop || Date() >= first.addingTimeInterval(interval) {
                    try database.checkpoint()
                    firstUncheckpointed = nil
                }
            } catch {
                publish(failure: error.description)
                break
            }
            if stop && batches.isEmpty { break }
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for batches, a stop, or the checkpoint deadline; takes every queued batch.
    private func nextBatches(checkpointDeadline: Date?) -> ([CommitBatch], stop: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping {
            if let checkpointDeadline {
                if !condition.wait(until: checkpointDeadline) { break }
            } else {
                condition.wait()
            }
        }
        let batches = queue
        queue = []
        return (batches, stopping)
    }

    private func publish(committed: UInt64? = nil, failure: String? = nil) {
        condition.lock()
        if let committed { published.committed = committed }
        if let failure { published.failure = failure }
        condition.unlock()
        onProgress()
    }
}
