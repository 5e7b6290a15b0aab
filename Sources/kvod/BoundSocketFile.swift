#if canImport(Glibc)
import Glibc
#endif

/// The socket file kvod bound, known by its device and inode, not only its
/// path: at shutdown kvod removes that file and nothing else. If another
/// process has put a file of its own at the path since (a second kvod after
/// someone removed ours, an operator), it stays.
struct BoundSocketFile: Equatable {
    let path: String
    let device: UInt64
    let inode: UInt64

    /// The file now at `path`, or nil when there is none.
    init?(at path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        self.path = path
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// Unlinks the path if it still names this file. (Between the check and
    /// the unlink the file could still be swapped; POSIX has no unlink-if.
    /// That window is one system call, where it used to be kvod's whole life.)
    func removeIfUnchanged() {
        guard BoundSocketFile(at: path) == self else { return }
        unlink(path)
    }
}
