import KVOEngine
import KVOStorage

/// A full disk under `--data-dir` (docs/DURABILITY.md, "A full disk"): the
/// storage writer says whether there is room, and the daemon tells the
/// engine which writes to refuse, and logs once when the disk becomes full,
/// once when changes start waiting for room, and once when it has room again
/// (never per refused write).
extension Daemon {
    /// Takes the storage writer's latest status.
    func noteStorage(_ status: StorageStatus) {
        let before = storageSeen
        storageSeen = status
        engine.storageAdmission = status.waitingChanges > 0 ? .nothing : status.full ? .removalsOnly : .everything
        guard let directory = configuration.dataDirectory else { return }
        if status.full && !before.full {
            logger.error("""
                the disk of \(directory) is full (\(Self.fullReason(status))): writes that add data get storage_full \
                until there is room again; reads, observations and deletes go on
                """)
        }
        if status.waitingChanges > 0 && before.waitingChanges == 0 {
            logger.error("""
                the disk of \(directory) has no room for \(status.waitingChanges) changes even with kvod's reserve \
                given up: they, their replies and all output after them wait for room (tried again every \
                \(Int(StorageWriter.spaceRetryInterval * 1000)) ms), and every change is refused meanwhile
                """)
        } else if status.waitingChanges == 0 && before.waitingChanges > 0 {
            logger.notice("the \(before.waitingChanges) changes that waited for room in \(directory) are committed")
        }
        if !status.full && before.full {
            logger.notice("""
                the disk of \(directory) has room again (\(status.availableBytes) bytes available, reserve held): \
                writes are taken again
                """)
        }
    }

    private static func fullReason(_ status: StorageStatus) -> String {
        if status.waitingChanges > 0 { return "changes wait for room" }
        if !status.reserveHeld {
            return "\(status.availableBytes) bytes available; kvod gave up its \(status.reserveBytes)-byte reserve "
                + "(--storage-reserve) to finish a commit, or has no room to make it"
        }
        return "\(status.availableBytes) bytes available, less than kvod's reserve of \(status.reserveBytes) "
            + "(--storage-reserve)"
    }
}
