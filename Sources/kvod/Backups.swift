import KVOEngine
import KVOProtocol
import KVOStorage
import Logging

/// `backup` on the daemon's side (docs/PROTOCOL.md, "Backups"): the storage
/// writer makes the snapshot between its commits, and each client that asked
/// keeps it (an open, unlinked file) until it reads its end, asks for another
/// or closes, reading it a chunk per request. Clients that ask while a
/// snapshot is being made share it: it ends after their request, so it holds
/// every change they were told of. Each snapshot takes as much disk as
/// `kvod.db`, so at most ``maxHeld`` are kept at once. Loop-confined.
final class Backups: BackupSource {
    private let writer: StorageWriter
    private unowned let engine: Engine
    private let logger: Logger
    /// Charges a chunk's bytes to the turn of the connection that reads it:
    /// one chunk is a connection's share of a loop turn, as 64 KiB of lines are.
    private let chargeTurn: (ClientController, Int) -> Void
    /// The ticket of the snapshot being made, and who waits for it.
    private var making: (ticket: UInt64, clients: [ClientController], since: ContinuousClock.Instant)?
    /// Each client's snapshot, by client id.
    private var snapshots: [Int: DatabaseSnapshot] = [:]
    /// Distinct snapshots kept at once (one being made counts): each is a copy of
    /// the database in the data directory's file system, whose space a commit needs too.
    static let maxHeld = 2

    init(writer: StorageWriter, engine: Engine, logger: Logger,
         chargeTurn: @escaping (ClientController, Int) -> Void) {
        self.writer = writer
        self.engine = engine
        self.logger = logger
        self.chargeTurn = chargeTurn
    }

    var held: (count: Int, bytes: UInt64) {
        var distinct: [ObjectIdentifier: UInt64] = [:]
        for snapshot in snapshots.values { distinct[ObjectIdentifier(snapshot)] = snapshot.size }
        return (distinct.count, distinct.values.reduce(0, +))
    }

    func startBackup(for client: ClientController) throws(KVOEngineError) {
        // A new one replaces the client's last.
        snapshots[client.id] = nil
        if var making {
            making.clients.append(client)
            self.making = making
        } else {
            let held = held.count
            guard held < Self.maxHeld else {
                throw KVOEngineError(.limitExceeded, """
                    kvod keeps \(held) backups already, each as large as its database, until their connections read \
                    them to the end or close; try again then
                    """)
            }
            making = (writer.takeSnapshot(), [client], .now)
            logger.info("client #\(client.id) asked for a backup: copying the database between commits")
        }
    }

    func readBackup(of client: ClientController, at offset: UInt64, count: Int) throws(KVOEngineError) -> [UInt8] {
        guard let snapshot = snapshots[client.id] else {
            throw KVOEngineError(.badRequest, "this connection holds no backup: send {\"op\":\"backup\"} without \"offset\" first")
        }
        guard offset <= snapshot.size else {
            throw KVOEngineError(.badRequest, "offset \(offset) is past the backup's end (its size is \(snapshot.size) bytes)")
        }
        // Read to its end: the connection is done with it, and its disk space may come back.
        if offset == snapshot.size {
            snapshots[client.id] = nil
            return []
        }
        let bytes: [UInt8]
        do {
            bytes = try snapshot.read(at: offset, count: count)
        } catch {
            throw KVOEngineError(.unavailable, "\(error); take the backup again")
        }
        chargeTurn(client, bytes.count)
        return bytes
    }

    /// The writer woke the loop: the snapshot may be made (or have failed).
    func writerProgressed() {
        guard let finished = writer.takeFinishedSnapshot() else { return }
        // One given up (its clients closed) and not asked for again: nobody's.
        guard let making, making.ticket == finished.ticket else { return }
        self.making = nil
        let took = ContinuousClock.now - making.since
        switch finished.result {
        case .success(let snapshot):
            logger.info("""
                backup made for \(making.clients.count) client(s): seq \(snapshot.seq), \(snapshot.size) bytes, in \(took) \
                (\(snapshot.steps): what a commit waited at most)
                """)
            for client in making.clients where !client.isClosed {
                snapshots[client.id] = snapshot
                engine.backupTaken(for: client, .success(BackupSummary(seq: snapshot.seq, size: snapshot.size)))
            }
        case .failure(let error):
            logger.warning("cannot make a backup: \(error)")
            // A disk without room for the copy: the copy is gone, and kvod goes on.
            let refusal = KVOEngineError(error.isFull ? .storageFull : .unavailable,
                                         "cannot make the backup: \(error); nothing changed")
            for client in making.clients { engine.backupTaken(for: client, .failure(refusal)) }
        }
    }

    /// `client` is gone: its snapshot is let go, and a copy nobody else waits for is given up.
    func clientClosed(_ client: ClientController) {
        snapshots[client.id] = nil
        guard var making, making.clients.contains(where: { $0 === client }) else { return }
        making.clients.removeAll { $0 === client }
        if making.clients.isEmpty {
            self.making = nil
            writer.cancelSnapshot()
            logger.info("backup given up: the client that asked for it left")
        } else {
            self.making = making
        }
    }
}
