import KVOEngine
import KVOStorage

/// The daemon's data directory: opening and restoring it at start, holding
/// output until the storage writer has committed what it reports, and
/// stopping (never acknowledging more) if a commit fails for another reason
/// than a full disk (that one, Daemon+StorageSpace.swift).
extension Daemon {
    /// Opens `--data-dir`, restores the engine from it and starts the writer
    /// thread. Without a data directory, says that state lives in memory only.
    func openStorage() throws(DaemonError) {
        guard let directory = configuration.dataDirectory else {
            // Over etcd the state is etcd's (Daemon+Cluster.swift).
            if configuration.etcdEndpoints.isEmpty {
                logger.notice("no --data-dir: values are kept in memory only, and a restart loses them")
            }
            return
        }
        let restored = try configuration.restoreFile.map { backup throws(DaemonError) in
            (backup, try restore(backup, into: directory))
        }
        let database: StateDatabase
        let state: SavedState
        do {
            database = try StateDatabase(directory: directory, syncMode: configuration.syncMode,
                                         historyCapacity: configuration.historyCapacity,
                                         historyBytes: configuration.historyBytes)
            state = try database.load()
        } catch {
            guard let (backup, _) = restored else { throw .cannotOpenStorage("\(error)") }
            DataDirectoryRestore.undo(in: directory)
            throw .cannotOpenStorage("cannot start on \(backup): \(error); \(directory) is left empty, as it was")
        }
        if let (backup, contents) = restored {
            logger.notice("""
                restored \(directory) from \(backup): \(contents.objects) objects, seq \(contents.seq) \
                (schema version \(contents.schemaVersion)), with a new epoch
                """)
        }
        for warning in database.warnings { logger.warning("\(warning)") }
        for line in database.quarantined { logger.error("\(line)") }
        engine.restore(state)
        let wakeup = UVAsync(loop: loop)
        let waker = wakeup.waker
        let fsync = metrics.fsync
        let writer = StorageWriter(database: database, reserveBytes: configuration.storageReserveBytes,
                                   onSync: { fsync.record($0) }) { waker.wake() }
        wakeup.handler = { [unowned self] in self.writerProgressed() }
        engine.storageStatus = { [unowned self, writer] in
            var status = writer.progress.storage
            status.commitsInFlight = storage?.groupCommit.batchesInFlight ?? 0
            status.heldOutputConnections = host.holdingOutput.count
            let now = loop.now
            status.heldOutputOldestMilliseconds = host.holdingOutput.compactMap { $0.heldSince.map { Int(now &- $0) } }.max() ?? 0
            return status
        }
        if let refusal = writer.reserveRefusal { logger.warning("\(refusal)") }
        noteStorage(writer.progress.storage)
        let groupCommit = GroupCommit(store: engine.store, writer: writer)
        engine.changeLog = groupCommit
        let backups = Backups(writer: writer, engine: engine, logger: logger) { [unowned self] client, bytes in
            self.connections[client.id]?.spendTurn(bytes: bytes)
        }
        engine.backupSource = backups
        self.backups = backups
        writer.start()
        self.storage = (groupCommit, writer, wakeup)
        logger.info("""
            state in \(database.path) (sync \(configuration.syncMode.rawValue)): \(state.documents.count) objects, \
            seq \(state.seq), \(engine.history.count) changes of history in \(engine.history.bytes) bytes \
            (at most \(configuration.historyCapacity) changes and \(configuration.historyBytes) bytes)
            """)
    }

    /// `--restore`: makes the (missing or empty) data directory from a backup.
    private func restore(_ backup: String, into directory: String) throws(DaemonError) -> BackupFile.Contents {
        do {
            return try DataDirectoryRestore.restore(backup, into: directory)
        } catch {
            throw .cannotOpenStorage("cannot restore \(backup) into \(directory): \(error)")
        }
    }

    /// Commits what is left, stops the writer thread and closes its wake-up
    /// handle, in that order: the writer may wake the loop until it stops.
    func stopStorage() {
        guard let (groupCommit, writer, wakeup) = storage else { return }
        groupCommit.submit()
        writer.stop()
        if let failure = groupCommit.refresh().failure, storageFailure == nil { storageFailure = failure }
        wakeup.close()
        engine.changeLog = nil
        engine.backupSource = nil
        backups = nil
        storage = nil
    }

    /// The writer committed (or failed): release the output that waited.
    private func writerProgressed() {
        guard let groupCommit = storage?.groupCommit else { return }
        backups?.writerProgressed()
        let progress = groupCommit.refresh()
        if let failure = progress.failure {
            failStorage(failure)
            return
        }
        noteStorage(progress.storage)
        release(upTo: progress.committed)
    }

    /// At the end of a loop turn: output whose batch the writer committed
    /// while the loop worked leaves now, not after the writer's wake-up is
    /// polled. A failure is left to that wake-up.
    func releaseCommitted() {
        guard let groupCommit = storage?.groupCommit, !host.holdingOutput.isEmpty else { return }
        let progress = groupCommit.refresh()
        if progress.failure == nil { release(upTo: progress.committed) }
    }

    private func release(upTo committed: UInt64) {
        let holding = host.holdingOutput
        host.holdingOutput.removeAll(keepingCapacity: true)
        for connection in holding {
            connection.releaseOutput(upTo: committed)
            if connection.isHoldingOutput { host.holdingOutput.append(connection) }
        }
    }

    /// A commit failed: what was not committed must never be acknowledged,
    /// so every connection closes without its held output and kvod exits
    /// non-zero (as Redis does when an `appendfsync always` write fails).
    private func failStorage(_ reason: String) {
        logger.critical("cannot commit to the data directory: \(reason); stopping")
        storageFailure = reason
        host.holdingOutput = []
        stopAtOnce()
    }
}
