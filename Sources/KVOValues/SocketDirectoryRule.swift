#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whom kvod's default socket and its directory may belong to: one rule for
/// the daemon (before it binds) and its clients (before they connect).
///
/// A default directory such as `/tmp/kvod-<uid>/` can be made by anyone
/// first. If it is another user's, or others may write in it, that user can
/// put a socket of their own where clients look and read what they send. So
/// the directory must be a real directory (not a symbolic link), belong to an
/// expected owner, and not be writable by group or others; a client also
/// wants the socket itself to belong to an expected owner.
///
/// The checks are pure: each side runs `lstat(2)` and passes the result.
public enum SocketDirectoryRule {
    /// Why `directory`, as `lstat` found it, must not hold the socket, with
    /// what to do about it; nil when it may. `owners` are the uids it may
    /// belong to; `remedy` ends the message (e.g. "or pass --socket PATH").
    public static func problem(directory: String, _ status: stat, owners: [uid_t], remedy: String) -> String? {
        let type = status.st_mode & S_IFMT
        if type == S_IFLNK {
            return "\(directory) is a symbolic link, not a directory; kvod's socket directory must be a real one. "
                + "Remove it (rm \(directory)) and start kvod again, \(remedy)"
        }
        guard type == S_IFDIR else {
            return "\(directory) exists and is not a directory. Remove it, \(remedy)"
        }
        guard owners.contains(status.st_uid) else {
            return "\(directory) belongs to uid \(status.st_uid), not to \(ownerText(owners)): another user may have "
                + "made it to intercept the socket. Remove it (as root or its owner) and start kvod again, \(remedy)"
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o022 == 0 else {
            return "\(directory) is writable by its group or by others (mode \(octal(mode))), who could replace "
                + "the socket. Run chmod go-w \(directory), \(remedy)"
        }
        return nil
    }

    /// Why the socket file at `path` must not be trusted (a client's check), or nil.
    public static func problem(socket path: String, _ status: stat, owners: [uid_t], remedy: String) -> String? {
        guard (status.st_mode & S_IFMT) == S_IFSOCK else { return "\(path) is not a socket, \(remedy)" }
        guard owners.contains(status.st_uid) else {
            return "\(path) belongs to uid \(status.st_uid), not to \(ownerText(owners)): it is not the kvod "
                + "expected there. Remove it (as root or its owner), \(remedy)"
        }
        return nil
    }

    private static func ownerText(_ owners: [uid_t]) -> String {
        owners.map { "uid \($0)" }.joined(separator: " or ")
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
