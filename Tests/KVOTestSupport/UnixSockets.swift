import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Unix sockets as tests see them: what the kernel says about them without
/// connecting (here), and connecting to them (UnixSockets+Connect.swift).
public enum UnixSockets {
    /// The inode of the socket file at `path`, nil if there is none: if kvod
    /// unlinked and re-bound the path, it changes.
    public static func fileInode(_ path: String) -> UInt64? {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return UInt64(status.st_ino)
    }

    /// The socket inodes (as in `/proc/PID/fd`'s `socket:[N]`) of the
    /// listening Unix sockets bound to `path`, from `/proc/net/unix`:
    /// Num RefCount Protocol Flags Type St Inode Path; flag 0x10000 is
    /// `__SO_ACCEPTCON`.
    public static func listeningInodes(at path: String) throws -> [String] {
        // Read to the end: /proc files report size 0, which some readers trust.
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/unix"))
        defer { try? file.close() }
        let table = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[7] == path,
                  let flags = UInt32(fields[3], radix: 16), flags & 0x10000 != 0 else { return nil }
            return String(fields[6])
        }
    }
}
