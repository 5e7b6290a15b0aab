import Foundation
import KVOEngine

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
///
/// A full disk is no such failure (docs/DURABILITY.md, "A full disk"):
/// SQLite rolls the commit back, and the writer gives up its reserve
/// (``StorageSpace``) and commits again; failing that, the batches wait and
/// are tried again every ``spaceRetryInterval``. It looks at the disk every
/// ``StorageSpace/probeInterval`` and publishes whether writes that add data
/// must be refused (``Progress/storage``), so that the loop refuses them
/// before anything is applied.
public final class StorageWriter: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`'s lock;
    // `database` is used only by the writer thread once `start` was called.

    /// How long `batch` mode lets a committed change wait for its sync.
    public static let batchInterval = 0.1
    /// How long committed changes wait in the WAL before a checkpoint.
    public static let checkpointInterval = 1.0
    /// How soon batches that found no room on the disk are committed again.
    public static let spaceRetryInterval = 0.5

    /// Why the data directory has no reserve though one was asked for (the
    /// filesystem refused it at start for another reason than room), for the log.
    public let reserveRefusal: String?

    /// How far the writer got.
    public struct Progress: Sendable, Equatable {
        /// The id of the last batch committed (0: none yet).
        public var committed: UInt64
        /// Why the writer stopped early, if it did.
        public var failure: String?
        /// The data directory's room to write, as last seen.
        public var storage: StorageStatus
    }

    private let database: StateDatabase
    private let onProgress: @Sendable () -> Void
    /// Told how long each sync to the disk took (`metrics`' fsync latency).
    private let onSync: @Sendable (Duration) -> Void
    private let condition = NSCondition()
    private var queue: [CommitBatch] = []
    private var published: Progress
    /// Batches a commit could not write for want of room, oldest first:
    /// committed again at `retryAt`, with what was queued after them.
    private var waiting: [CommitBatch] = []
    private var retryAt: Date?
    /// The changes in `waiting`. The writer thread's.
    private var waitingChanges = 0
    /// The reserve and what the disk has room for. The writer thread's once started.
    private let space: StorageSpace
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

    /// `onProgress` is called from the writer thread after each commit, on
    /// failure (also from the WAL syncer's thread, for a failed sync) and
    /// when the storage status changes (whether writes must be refused).
    /// `onSync` is told how long each sync took, from the thread that synced:
    /// the `fdatasync` of the commit syncer (`always`) or of the WAL syncer
    /// (`batch`); `off` never syncs. `reserveBytes`: the space kept in the
    /// data directory's reserve file (`--storage-reserve`; 0: none), filled
    /// here, and the disk looked at once before this returns.
    public init(database: StateDatabase, reserveBytes: Int = 0,
                onSync: @escaping @Sendable (Duration) -> Void = { _ in },
                onProgress: @escaping @Sendable () -> Void) {
        self.database = database
        self.onSync = onSync
        self.onProgress = onProgress
        space = StorageSpace(directory: database.directory, reserveBytes: reserveBytes)
        _ = space.probe(database, waitingChanges: 0, force: true)
        reserveRefusal = space.reserveRefusal
        published = Progress(committed: 0, failure: nil, storage: space.status)
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
    /// Batches that still find no room on the disk are given up: the
    /// failure says so (none of their changes was acknowledged).
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
    /// committed here it skips the two thread wake-ups. One that finds the
    /// disk full is declined, nothing written: the writer thread makes room.
    public func commitHere(_ batch: CommitBatch) -> DirectCommit {
        guard commitSyncer == nil else { return .declined }
        condition.lock()
        guard queue.isEmpty, waiting.isEmpty, !databaseBusy, !stopping, !checkpointed, published.failure == nil else {
            condition.unlock()
            return .declined
        }
        databaseBusy = true
        condition.unlock()
        var failure: String?
        do throws(StorageError) {
            try database.write([batch])
        } catch where error.isFull {
            condition.lock()
            databaseBusy = false
            if waitsForDatabase { condition.signal() }
            condition.unlock()
            return .declined
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
            let work = nextWork()
            // Whether this thread still has the database (it gives it back early after a commit alone).
            var holdsDatabase = true
            var failed = false
            // The disk is looked at now, not when due: room was found missing, or again.
            var forceProbe = false
            do throws(StorageError) {
                if !work.batches.isEmpty {
                    holdsDatabase = try commit(work.batches, stop: work.stop, checkpointDue: work.checkpointDue,
                                               forceProbe: &forceProbe)
                }
                if work.checkpointDue || (work.stop && hasUncheckpointedCommits) {
                    try checkpoint(forceProbe: &forceProbe)
                }
            } catch {
                publish(failure: error.description)
                failed = true
            }
            if holdsDatabase {
                if !failed { publishStorage(changed: space.probe(database, waitingChanges: waitingChanges,
                                                                 force: forceProbe)) }
                condition.lock()
                databaseBusy = false
                condition.unlock()
            }
            if failed || (work.stop && work.batches.isEmpty) { break }
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Commits `batches` (their changes wait in ``waiting`` when the disk has
    /// no room even after the reserve is given up) and publishes them;
    /// returns whether this thread still holds the database.
    private func commit(_ batches: [CommitBatch], stop: Bool, checkpointDue: Bool,
                        forceProbe: inout Bool) throws(StorageError) -> Bool {
        guard try writeMakingRoom(batches, forceProbe: &forceProbe) else {
            let changes = batches.reduce(0) { $0 + $1.changes.count }
            if stop {
                throw StorageError("""
                    the disk of \(database.directory) is full: \(changes) changes made before the stop could not \
                    be committed, and none of them was acknowledged
                    """)
            }
            condition.lock()
            waiting = batches
            retryAt = Date().addingTimeInterval(Self.spaceRetryInterval)
            condition.unlock()
            waitingChanges = changes
            forceProbe = true
            return true
        }
        if waitingChanges > 0 {
            waitingChanges = 0
            forceProbe = true
        }
        syncer?.noteCommit()
        let storageChanged = space.probe(database, waitingChanges: 0, force: forceProbe)
        forceProbe = false
        var holdsDatabase = true
        condition.lock()
        if uncheckpointedSince == nil { uncheckpointedSince = Date() }
        checkpointed = false
        if commitSyncer == nil { published.committed = batches.last!.id }
        published.storage = space.status
        // The database is free before the loop hears of the commit: its next group may be committed there.
        if !checkpointDue && !stop {
            databaseBusy = false
            holdsDatabase = false
        }
        condition.unlock()
        if let commitSyncer {
            commitSyncer.noteCommit(through: batches.last!.id)
            if storageChanged { onProgress() }
        } else {
            onProgress()
        }
        return holdsDatabase
    }

    /// Writes `batches`; when the disk is full, gives the reserve up and
    /// writes them again. False: still no room (nothing was written).
    private func writeMakingRoom(_ batches: [CommitBatch], forceProbe: inout Bool) throws(StorageError) -> Bool {
        do throws(StorageError) {
            try database.write(batches)
            return true
        } catch where error.isFull {
            guard space.giveUpReserve() else { return false }
            forceProbe = true
        }
        do throws(StorageError) {
            try database.write(batches)
            return true
        } catch where error.isFull {
            return false
        }
    }

    /// Copies the WAL into the database file. One that finds the disk full
    /// leaves the commits in the WAL (where they are safe) and is tried
    /// again after ``checkpointInterval``.
    private func checkpoint(forceProbe: inout Bool) throws(StorageError) {
        do throws(StorageError) {
            try database.checkpoint()
            condition.lock()
            uncheckpointedSince = nil
            checkpointed = true
            condition.unlock()
        } catch where error.isFull {
            condition.lock()
            uncheckpointedSince = Date()
            condition.unlock()
            forceProbe = true
        }
    }

    private var hasUncheckpointedCommits: Bool {
        condition.lock()
        defer { condition.unlock() }
        return uncheckpointedSince != nil
    }

    /// What the writer thread does next: commit `batches` (none: only
    /// checkpoint or look at the disk), then stop if `stop`.
    private struct Work {
        var batches: [CommitBatch]
        var stop: Bool
        var checkpointDue: Bool
    }

    /// Waits for batches, a stop, the checkpoint deadline, the retry of
    /// batches that found no room, or the next look at the disk, while the
    /// database is free; takes every batch to commit and the database.
    private func nextWork() -> Work {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = Date()
            let checkpointDeadline = uncheckpointedSince?.addingTimeInterval(Self.checkpointInterval)
            let checkpointDue = checkpointDeadline.map { now >= $0 } ?? false
            let failed = published.failure != nil
            // While batches wait for room, those queued after them wait for the retry too.
            let commitDue = waiting.isEmpty ? !queue.isEmpty : retryAt.map { now >= $0 } ?? true
            if !databaseBusy && (commitDue || stopping || checkpointDue || failed || now >= space.nextProbe) {
                databaseBusy = true
                var batches: [CommitBatch] = []
                if !failed && (commitDue || stopping) {
                    batches = waiting + queue
                    waiting = []
                    queue = []
                    retryAt = nil
                }
                return Work(batches: batches, stop: stopping || failed, checkpointDue: checkpointDue && !failed)
            }
            if databaseBusy {
                waitsForDatabase = true
                condition.wait()
                waitsForDatabase = false
            } else {
                let deadline = [checkpointDeadline, retryAt, space.nextProbe].compactMap { $0 }.min()!
                _ = condition.wait(until: deadline)
            }
        }
    }

    /// Publishes what the last look at the disk saw; wakes the loop when it
    /// `changed` what the loop decides by (whether writes are refused).
    private func publishStorage(changed: Bool) {
        condition.lock()
        published.storage = space.status
        condition.unlock()
        if changed { onProgress() }
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
