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
///
/// It also copies the database for `backup` (``takeSnapshot()``): a
/// ``SnapshotCopy`` step of ``snapshotStepPages`` pages after each round of
/// commits, so a commit waits for one step at most. A copy the disk has no
/// room for fails as a full disk (``StorageSpace/roomForCopy(of:)``).
public final class StorageWriter: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`'s lock but
    // `snapshotCopy`; it and `database` are used only by the writer thread once
    // `start` was called (``commitHere(_:)`` holds the database only while the
    // writer thread is idle and no copy is under way).

    /// How long `batch` mode lets a committed change wait for its sync.
    public static let batchInterval = 0.1
    /// How long committed changes wait in the WAL before a checkpoint.
    public static let checkpointInterval = 1.0
    /// How soon batches that found no room on the disk are committed again.
    public static let spaceRetryInterval = 0.5
    /// Pages a backup's copy takes per step: what a commit may wait for
    /// (docs/OPERATIONS.md, "Backup and restore", has the pause measured).
    static let snapshotStepPages: Int32 = 64

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
    /// The writer thread is over and holds the writer no more (``condition``'s).
    /// A box the thread keeps without the writer, so that ``stop()`` returns
    /// once the writer and its database's lock go with their owner's last reference.
    private let threadEnd = ThreadEnd()
    private final class ThreadEnd: @unchecked Sendable {
        var ended = false
    }
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
    /// The ticket of the snapshot wanted now (``takeSnapshot()``); nil: none.
    private var wantedSnapshot: UInt64?
    private var lastSnapshotTicket: UInt64 = 0
    /// The snapshot finished (or failed) and not collected yet, with its ticket.
    private var finishedSnapshot: (ticket: UInt64, result: Result<DatabaseSnapshot, StorageError>)?
    /// A copy is under way (``snapshotCopy`` is set), for ``commitHere(_:)``.
    private var copyingSnapshot = false
    /// The copy under way: the writer thread's alone.
    private var snapshotCopy: SnapshotCopy?

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
        let (condition, threadEnd) = (self.condition, self.threadEnd)
        let thread = Thread { [weak self] in
            // The writer is released here, before stop() hears the end: a database opened
            // again on its directory once the owner lets it go finds it closed, not busy.
            if let self { self.run() }
            condition.lock()
            threadEnd.ended = true
            condition.broadcast()
            condition.unlock()
        }
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
        condition.withLock { published }
    }

    /// Commits what is queued, syncs, stops the thread and waits for it.
    /// Batches that still find no room on the disk are given up: the
    /// failure says so (none of their changes was acknowledged).
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !threadEnd.ended { condition.wait() }
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
        // While a backup's copy is made, the connection stays the writer thread's.
        guard queue.isEmpty, waiting.isEmpty, !databaseBusy, !stopping, !checkpointed, published.failure == nil,
              wantedSnapshot == nil, !copyingSnapshot else {
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
                    // A step of a backup's copy follows: the database stays this thread's.
                    let keepsDatabase = work.checkpointDue || work.snapshot != nil || snapshotCopy != nil
                    holdsDatabase = try commit(work.batches, stop: work.stop, keepsDatabase: keepsDatabase,
                                               forceProbe: &forceProbe)
                }
                if work.checkpointDue || (work.stop && hasUncheckpointedCommits) {
                    try checkpoint(forceProbe: &forceProbe)
                }
            } catch {
                publish(failure: error.description)
                failed = true
            }
            if !failed && !work.stop { stepSnapshot(work.snapshot) }
            if holdsDatabase {
                if !failed { publishStorage(changed: space.probe(database, waitingChanges: waitingChanges,
                                                                 force: forceProbe)) }
                condition.withLock { databaseBusy = false }
            }
            if failed || (work.stop && work.batches.isEmpty) { break }
        }
        endSnapshot(because: "kvod stopped before the backup's copy was made")
    }

    /// Commits `batches` (their changes wait in ``waiting`` when the disk has
    /// no room even after the reserve is given up) and publishes them;
    /// returns whether this thread still holds the database (it does after
    /// a `stop`, or when it `keepsDatabase` for a checkpoint or a copy's step).
    private func commit(_ batches: [CommitBatch], stop: Bool, keepsDatabase: Bool,
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
        if !keepsDatabase && !stop {
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
            condition.withLock { uncheckpointedSince = Date() }
            forceProbe = true
        }
    }

    private var hasUncheckpointedCommits: Bool {
        condition.withLock { uncheckpointedSince != nil }
    }

    /// What the writer thread does next: commit `batches` (none: only
    /// checkpoint or look at the disk), then stop if `stop`, or else take a
    /// step of the copy of `snapshot` (nil: none is wanted).
    private struct Work {
        var batches: [CommitBatch]
        var stop: Bool
        var checkpointDue: Bool
        var snapshot: UInt64?
    }

    /// Waits for batches, a stop, the checkpoint deadline, the retry of
    /// batches that found no room, the next look at the disk, or a
    /// snapshot's next step, while the database is free; takes every batch
    /// to commit and the database.
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
            // A copy under way whose snapshot is no longer wanted is given up in a step too.
            let snapshotStep = wantedSnapshot != nil || copyingSnapshot
            if !databaseBusy
                && (commitDue || stopping || checkpointDue || failed || now >= space.nextProbe || snapshotStep) {
                databaseBusy = true
                var batches: [CommitBatch] = []
                if !failed && (commitDue || stopping) {
                    batches = waiting + queue
                    waiting = []
                    queue = []
                    retryAt = nil
                }
                return Work(batches: batches, stop: stopping || failed, checkpointDue: checkpointDue && !failed,
                            snapshot: wantedSnapshot)
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

    // MARK: Snapshots for backup

    /// Asks for a consistent copy of the database (``DatabaseSnapshot``),
    /// made a step at a time between commits; ``takeFinishedSnapshot()``
    /// gives it once it is made, and `onProgress` is called then. Returns its
    /// ticket. One copy at a time: asked again before it is made (also after
    /// ``cancelSnapshot()``), the copy under way goes on under the new ticket.
    public func takeSnapshot() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        lastSnapshotTicket += 1
        wantedSnapshot = lastSnapshotTicket
        condition.signal()
        return lastSnapshotTicket
    }

    /// The snapshot asked for is no longer wanted: its copy is given up.
    public func cancelSnapshot() {
        condition.lock()
        wantedSnapshot = nil
        condition.signal()
        condition.unlock()
    }

    /// The snapshot made since the last call, with the ticket it was asked
    /// under, or why it could not be made; nil when none has finished.
    public func takeFinishedSnapshot() -> (ticket: UInt64, result: Result<DatabaseSnapshot, StorageError>)? {
        condition.withLock {
            defer { finishedSnapshot = nil }
            return finishedSnapshot
        }
    }

    /// One step of the copy of the snapshot `ticket` asks for (nil: give up
    /// the one under way), on the writer thread, holding the database.
    private func stepSnapshot(_ ticket: UInt64?) {
        guard let ticket else {
            if let copy = snapshotCopy {
                copy.abandon()
                setCopy(nil)
            }
            return
        }
        do throws(StorageError) {
            let copy: SnapshotCopy
            if let snapshotCopy {
                copy = snapshotCopy
            } else {
                if let refusal = space.roomForCopy(of: database) { throw refusal }
                copy = try SnapshotCopy(of: database.connection, into: database.snapshotPath)
                setCopy(copy)
            }
            guard try copy.step(pages: Self.snapshotStepPages) else { return }
            let snapshot = try copy.finish()
            setCopy(nil)
            publish(snapshot: .success(snapshot), ticket: ticket)
        } catch {
            snapshotCopy?.abandon()
            setCopy(nil)
            publish(snapshot: .failure(error), ticket: ticket)
        }
    }

    private func setCopy(_ copy: SnapshotCopy?) {
        snapshotCopy = copy
        condition.withLock { copyingSnapshot = copy != nil }
    }

    /// The writer stops: a snapshot wanted or under way fails with `reason`.
    private func endSnapshot(because reason: String) {
        snapshotCopy?.abandon()
        setCopy(nil)
        let ticket = condition.withLock { wantedSnapshot }
        if let ticket { publish(snapshot: .failure(StorageError(reason)), ticket: ticket) }
    }

    private func publish(snapshot: Result<DatabaseSnapshot, StorageError>, ticket: UInt64) {
        condition.lock()
        // A later ticket was asked while this copy was made: it is that one's too.
        let latest = wantedSnapshot ?? ticket
        wantedSnapshot = nil
        finishedSnapshot = (latest, snapshot)
        condition.unlock()
        onProgress()
    }

    /// Publishes what the last look at the disk saw; wakes the loop when it
    /// `changed` what the loop decides by (whether writes are refused).
    private func publishStorage(changed: Bool) {
        condition.withLock { published.storage = space.status }
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
