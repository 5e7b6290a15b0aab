import Foundation
import KVOEngine

/// Whether the data directory has room for writes that add data, decided on
/// the storage writer's thread from what the disk says (docs/DURABILITY.md,
/// "A full disk"). It is full while less than the reserve is available (the
/// filesystem's free bytes for kvod's user and the database's free pages),
/// while the reserve is given up, or while changes wait for room. The
/// reserve is filled again once the filesystem has room for it and as much
/// again, and no change waits.
///
/// Used by one thread at a time: the daemon's at start, then the writer's.
final class StorageSpace {
    /// How often the writer looks at the disk, idle or not (a `statvfs` and a pragma).
    static let probeInterval = 0.5
    private let directory: String
    private let reserve: StorageReserve
    private(set) var status: StorageStatus
    /// When the disk is due to be looked at again.
    private(set) var nextProbe = Date.distantPast

    init(directory: String, reserveBytes: Int) {
        self.directory = directory
        reserve = StorageReserve(directory: directory, bytes: reserveBytes)
        status = StorageStatus(reserveBytes: reserve.bytes, reserveHeld: reserve.isHeld)
    }

    /// Why kvod keeps no reserve though one was asked for, if so.
    var reserveRefusal: String? { reserve.refusal }

    /// A commit found the disk full: gives the reserve up, for the same
    /// commit to be made again at once. False when there was none left to give.
    func giveUpReserve() -> Bool {
        guard reserve.bytes > 0, reserve.isHeld else { return false }
        reserve.release()
        return true
    }

    /// Looks at the disk when due (or at once, `force`), refilling the
    /// reserve when it can; `waitingChanges`: changes that found no room and
    /// wait. Returns whether the status changed in what it decides (whether
    /// writes are refused, the reserve, what waits); the bytes available are
    /// updated without counting as a change.
    func probe(_ database: StateDatabase, waitingChanges: Int, force: Bool = false) -> Bool {
        let now = Date()
        guard force || now >= nextProbe else { return false }
        nextProbe = now.addingTimeInterval(Self.probeInterval)
        // Unknown (statvfs failed): the reserve and SQLite's own errors still tell.
        var free = StateDatabase.filesystemFreeBytes(directory) ?? Int.max
        if !reserve.isHeld, waitingChanges == 0, free / 2 >= reserve.bytes, reserve.fill() { free -= reserve.bytes }
        let (available, overflow) = free.addingReportingOverflow(database.freePageBytes())
        var next = status
        next.reserveBytes = reserve.bytes
        next.availableBytes = overflow ? Int.max : available
        next.reserveHeld = reserve.isHeld
        next.waitingChanges = waitingChanges
        next.full = waitingChanges > 0 || !reserve.isHeld || next.availableBytes < reserve.bytes
        if next.full != status.full { next.since = next.full ? Self.timestamp(now) : nil }
        let changed = next.full != status.full || next.reserveHeld != status.reserveHeld
            || next.waitingChanges != status.waitingChanges
        status = next
        return changed
    }

    /// `2025-06-01T12:00:00Z`.
    private static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
