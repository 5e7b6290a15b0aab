import Foundation
import Glibc

/// Where `kvoctl backup FILE` writes: `FILE.tmp` while the chunks come,
/// synced, then renamed to FILE (and the directory synced), so that FILE is
/// either the old file or a whole, checked backup, never a part of one.
final class BackupOutput {
    let path: String
    let temporary: String
    private var descriptor: Int32
    /// Bytes written so far.
    private(set) var written: UInt64 = 0

    /// Creates `path`.tmp anew, mode 0600: a backup holds every value. What
    /// has that name already (a failed run's file, or another user's file or
    /// symlink in a shared folder) is removed, never opened: its owner, mode
    /// or target would become the backup's.
    init(path: String) throws(CommandFailure) {
        self.path = path
        temporary = path + ".tmp"
        if unlink(temporary) != 0, errno != ENOENT { throw Self.failure("cannot remove the \(temporary) already there") }
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot create \(temporary)") }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    func write(_ bytes: Data) throws(CommandFailure) {
        var left = bytes[...]
        while !left.isEmpty {
            let count = left.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Self.failure("cannot write \(temporary)") }
            left = left.dropFirst(count)
            written += UInt64(count)
        }
    }

    /// Syncs and closes `path`.tmp, which is then ready to be checked.
    func close() throws(CommandFailure) {
        guard fsync(descriptor) == 0 else { throw Self.failure("cannot sync \(temporary)") }
        let result = Glibc.close(descriptor)
        descriptor = -1
        guard result == 0 else { throw Self.failure("cannot close \(temporary)") }
    }

    /// Renames `path`.tmp to `path` and syncs the directory that holds them.
    func commit() throws(CommandFailure) {
        guard rename(temporary, path) == 0 else { throw Self.failure("cannot rename \(temporary) to \(path)") }
        let directory = (path as NSString).deletingLastPathComponent
        let folder = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            Glibc.close(folder)
        }
    }

    /// Removes `path`.tmp: the backup failed.
    func discard() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
        unlink(temporary)
    }

    private static func failure(_ what: String) -> CommandFailure {
        .usage("\(what): \(String(cString: strerror(errno)))")
    }
}
