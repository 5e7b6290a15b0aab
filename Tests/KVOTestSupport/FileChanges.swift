import Foundation
import Glibc

/// Writes to one file, as the kernel reports them (inotify): what a test
/// waits on to read a log again, instead of polling it. Blocking; for
/// synchronous tests. The corresponding C functions are `inotify_init1`,
/// `inotify_add_watch` and `poll`.
public final class FileChanges {
    private let fd: Int32

    /// Watches the file at `path`, which must exist.
    public init(path: String) throws {
        // `fd` is set only once the watch is in place: a class whose init throws
        // after setting every property runs its deinit, which would close the
        // descriptor a second time, maybe by then another thread's (SQLite's).
        let descriptor = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard descriptor >= 0 else { throw TestFailure("inotify_init1 failed: errno \(errno)") }
        guard inotify_add_watch(descriptor, path, UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE)) >= 0 else {
            let code = errno
            close(descriptor)
            throw TestFailure("cannot watch \(path): errno \(code)")
        }
        fd = descriptor
    }

    deinit { close(fd) }

    /// Waits until the file was written to since the last wait (true) or
    /// `deadline` passed (false).
    @available(*, noasync, message: "blocks a cooperative thread")
    public func wait(until deadline: Date) -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 3600) * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return false }
            // Takes every event queued so far: they all say the same thing.
            withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
                while read(fd, buffer.baseAddress, buffer.count) > 0 {}
            }
            return true
        }
    }
}
