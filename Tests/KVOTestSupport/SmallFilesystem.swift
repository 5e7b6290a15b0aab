import Foundation
import Glibc

/// A tmpfs of a few MiB of one test's own, mounted on a temporary folder: a
/// disk that a test fills and frees (docs/DURABILITY.md, "A full disk").
/// Unmounted and removed by ``remove()``, also called by `deinit`, so a
/// failing test leaves no mount behind. Mounting needs root (CAP_SYS_ADMIN).
///
/// @unchecked Sendable: only the test that owns it touches it.
public final class SmallFilesystem: @unchecked Sendable {
    public let path: String
    private var mounted = false

    /// Whether a tmpfs can be mounted here: a probe one is mounted and unmounted.
    public static let canMount: Bool = {
        guard geteuid() == 0, let probe = try? TemporaryDirectory.make() else { return false }
        defer { rmdir(probe) }
        guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
        return umount2(probe, Int32(MNT_DETACH)) == 0
    }()

    public init(bytes: Int) throws {
        path = try TemporaryDirectory.make()
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(bytes),mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(path)
            throw TestFailure("cannot mount a tmpfs on \(path): \(reason)")
        }
        mounted = true
    }

    deinit { remove() }

    /// Unmounts (lazily: a kvod that still has a file open there does not keep it) and removes the folder.
    public func remove() {
        guard mounted else { return }
        mounted = false
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    /// Bytes free on it.
    public var freeBytes: Int {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return 0 }
        return Int(status.f_bavail) * Int(status.f_frsize)
    }

    /// Takes all but `leaving` bytes of what is free with a file `name` of its own (allocated, not sparse).
    public func fill(_ name: String, leaving: Int = 0) throws {
        let bytes = freeBytes - leaving
        guard bytes > 0 else { return }
        let fd = open(path + "/" + name, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TestFailure("cannot create \(name): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let result = posix_fallocate(fd, 0, off_t(bytes))
        guard result == 0 else { throw TestFailure("cannot allocate \(bytes) bytes: \(String(cString: strerror(result)))") }
    }

    /// Frees what ``fill(_:leaving:)`` took with `name`.
    public func free(_ name: String) {
        unlink(path + "/" + name)
    }
}
