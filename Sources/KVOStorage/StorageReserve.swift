#if canImport(Glibc)
import Glibc
#endif

/// `kvod.reserve` in the data directory: disk space kvod holds for itself
/// (`--storage-reserve`). When a commit finds the disk full, the writer
/// empties the file and commits again, so that the changes already made in
/// memory, whose replies wait for that commit, still reach the disk; the file
/// is filled again once the filesystem has room for it and as much again
/// (docs/DURABILITY.md, "A full disk").
///
/// Filled with `posix_fallocate`, so the blocks are the file's, not just its
/// size. On a copy-on-write or compressing filesystem (btrfs, ZFS) that
/// holds no space for later writes: there the reserve is only a hope.
/// Used by one thread at a time (the daemon's at start, then the writer's).
final class StorageReserve {
    static let fileName = "kvod.reserve"
    let path: String
    /// How much the file holds when it is held (0: kvod keeps no reserve, and no file).
    private(set) var bytes: Int
    /// Whether the file holds ``bytes`` now (always, with no reserve to hold).
    private(set) var isHeld: Bool
    /// Why kvod keeps no reserve after all, when the filesystem refused it for
    /// another reason than room (a file size limit, no `fallocate`): for the log.
    private(set) var refusal: String?

    /// Fills the reserve file in `directory` to `bytes`, or, with 0, removes
    /// it; on a disk that has no room for it the reserve starts given up.
    init(directory: String, bytes: Int) {
        path = directory + "/" + Self.fileName
        self.bytes = bytes
        isHeld = bytes == 0
        if bytes == 0 {
            unlink(path)
        } else {
            fill()
        }
    }

    /// Allocates the file's blocks up to ``bytes`` (those already there cost
    /// nothing); on failure (no room) the file is emptied, so that no part of
    /// a reserve holds space that the database could use.
    @discardableResult
    func fill() -> Bool {
        guard bytes > 0 else { return true }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            isHeld = false
            return false
        }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_size > bytes { _ = ftruncate(fd, off_t(bytes)) }
        let result = posix_fallocate(fd, 0, off_t(bytes))
        isHeld = result == 0
        if !isHeld { _ = ftruncate(fd, 0) }
        if result != 0 && result != ENOSPC && result != EDQUOT {
            refusal = "cannot keep a reserve of \(bytes) bytes in \(path) (\(String(cString: strerror(result)))): "
                + "running without one, as with --storage-reserve 0"
            bytes = 0
            isHeld = true
            unlink(path)
        }
        return isHeld
    }

    /// Gives the space up (the file stays, empty): the database may use it now.
    func release() {
        guard bytes > 0 else { return }
        _ = truncate(path, 0)
        isHeld = false
    }
}
