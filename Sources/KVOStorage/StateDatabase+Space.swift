#if canImport(Glibc)
import Glibc
#endif

/// What the data directory has room for: the filesystem's free space and
/// the free pages inside the database, which SQLite fills before it grows
/// the file (a delete frees pages, not disk space).
extension StateDatabase {
    /// Bytes of the database's free pages (`PRAGMA freelist_count`), 0 if SQLite cannot say.
    func freePageBytes() -> Int {
        let count = statements.freelistCount
        defer { count.reset() }
        guard (try? count.step()) == true else { return 0 }
        return Int(count.int64(0)) * pageSize
    }

    /// Bytes free for kvod's user on the filesystem that holds `directory`
    /// (`statvfs`'s `f_bavail`: not what only root may use); nil if it cannot be read.
    static func filesystemFreeBytes(_ directory: String) -> Int? {
        var status = statvfs()
        guard statvfs(directory, &status) == 0 else { return nil }
        let free = UInt64(status.f_bavail).multipliedReportingOverflow(by: UInt64(status.f_frsize))
        return free.overflow ? Int.max : Int(clamping: free.partialValue)
    }
}
