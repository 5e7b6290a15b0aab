import KVOProtocol
import KVOValues

/// Writes while the data directory's disk is full (docs/DURABILITY.md, "A
/// full disk"). The daemon says which writes the disk lets through
/// (``Engine/storageAdmission``); a write it does not is refused with
/// `storage_full` before anything is applied, so that it changes nothing and
/// no observer hears of it. Reads and observations always go on.
extension Engine {
    /// Which writes the data directory has room for now.
    public enum StorageAdmission: Sendable, Equatable {
        /// Every write (also without a data directory).
        case everything
        /// Only those that take data away (`delete`, `remove`, and batches of
        /// them), which a full disk must let through to free room in the database.
        case removalsOnly
        /// None: changes wait for room already, and more would only wait behind them.
        case nothing
    }

    /// Refuses `operation` when it is a write the disk has no room for.
    func checkStorage(for operation: Operation) throws(KVOEngineError) {
        switch storageAdmission {
        case .everything:
            return
        case .removalsOnly:
            guard operation.addsData else { return }
        case .nothing:
            guard operation.spec.changesState else { return }
        }
        resources.refusals.storage += 1
        throw KVOEngineError(.storageFull, storageAdmission == .nothing ? """
            the data directory's disk is full and changes already wait for room there: no change is taken \
            until space is freed; nothing changed (reads and observations go on)
            """ : """
            the data directory's disk is full: no write that adds data is taken until space is freed; \
            nothing changed (reads, observations and deletes go on)
            """)
    }

    /// `info`'s `storage`: whether writes are refused, since when, and, to a
    /// client that may read everything, the bytes behind it (backups kept included).
    func writeStorageInfo(tellsSizes: Bool, into reply: inout ReplyEncoder) {
        guard let status = storageStatus?() else { return }
        typealias Figure = InfoFigure.Storage
        var storage = JSONObject([Figure.full: .bool(status.full)])
        if let since = status.since { storage[Figure.since] = .string(since) }
        // Why replies may be late: output waits for its changes' commit (docs/DURABILITY.md).
        storage[Figure.commitsInFlight] = .number(JSONNumber(status.commitsInFlight))
        storage[Figure.heldOutputConnections] = .number(JSONNumber(status.heldOutputConnections))
        storage[Figure.heldOutputOldestMs] = .number(JSONNumber(status.heldOutputOldestMilliseconds))
        if tellsSizes {
            storage[Figure.availableBytes] = .number(JSONNumber(status.availableBytes))
            storage[Figure.reserveBytes] = .number(JSONNumber(status.reserveBytes))
            storage[Figure.reserveHeld] = .bool(status.reserveHeld)
            let held = backupSource?.held ?? (count: 0, bytes: 0)
            storage[Figure.backups] = .number(JSONNumber(held.count))
            storage[Figure.backupBytes] = .number(JSONNumber(validatedLiteral: String(held.bytes)))
        }
        reply.field(.storage, .object(storage))
    }
}

extension Operation {
    /// Whether the op may add data: a `set`, `insert`, `replace` or `add`
    /// (which may make its value, and lengthen a number), or a batch with one.
    /// Exhaustive: a new op must say.
    var addsData: Bool {
        switch self {
        case .set, .insert, .replace, .add: true
        case .batch(let operations): operations.contains { $0.operation.addsData }
        case .get, .delete, .remove, .observe, .unobserve, .list, .unobserveAll, .ping, .info, .observations,
             .metrics, .ack:
            false
        // Its copy is made outside the database: the storage writer sees whether the disk has room.
        case .backup: false
        }
    }
}
