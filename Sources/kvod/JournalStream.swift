#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Whether kvod's stderr goes straight to the systemd journal.
///
/// systemd connects a service's stderr to journald and sets `$JOURNAL_STREAM`
/// to that stream's `device:inode`, in decimal (systemd.exec(5)). The variable
/// alone proves nothing: a program started from a service inherits it, even
/// with its stderr sent elsewhere. So, as sd-daemon(3) advises, it counts only
/// when it names the file that descriptor 2 is.
enum JournalStream {
    /// True when `value` (`$JOURNAL_STREAM`) is the device and inode of descriptor 2.
    static func isStandardError(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}

extension Logger.Level {
    /// The syslog priority journald files a line of this level under, given
    /// as the line's `<N>` prefix (sd-daemon(3)): swift-log's levels are
    /// syslog's, except that trace has none of its own and shares debug's.
    var journalPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
