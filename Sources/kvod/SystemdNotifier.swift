#if canImport(Glibc)
import Glibc
#endif

/// The sending half of systemd's notify protocol (`sd_notify(3)`): one
/// datagram of newline-separated `KEY=VALUE` assignments (`READY=1`,
/// `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`) to the `AF_UNIX` socket named by
/// `$NOTIFY_SOCKET`, a file system path or, with a leading `@`, an abstract
/// name.
///
/// Written here instead of linking libsystemd's `sd_notify`: the protocol is
/// those few lines, kvod needs nothing else from libsystemd, and one fewer
/// shared library keeps the installed binary's dependencies at glibc, libuv
/// and the C++ runtime on any Linux, with or without systemd's development
/// headers at build time.
///
/// Sends never block (`MSG_DONTWAIT`): a service manager that does not read
/// must not stall the event loop. A lost `WATCHDOG=1` is followed by the next
/// one half a period later.
final class SystemdNotifier {
    /// What the service manager asked for, read once from the environment.
    struct Target: Sendable, Equatable {
        /// `$NOTIFY_SOCKET`: a path (`/run/systemd/notify`) or `@abstract`.
        let socket: String
        /// `$WATCHDOG_USEC`, when the watchdog is on and meant for this
        /// process (`$WATCHDOG_PID` unset or equal to ours).
        let watchdogMicroseconds: UInt64?
    }

    let target: Target
    private var fd: Int32 = -1

    init(target: Target) {
        self.target = target
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`, then unsets
    /// them so that nothing kvod might start inherits them (as
    /// `sd_notify(unset_environment=1)` does). Nil when there is no usable
    /// notify socket: kvod was not started by a service manager that listens.
    /// Call before other threads exist: `unsetenv` is not thread-safe.
    static func takeTarget(pid: pid_t = getpid()) -> (target: Target?, problem: String?) {
        let socket = ProcessEnvironment.take("NOTIFY_SOCKET")
        let usec = ProcessEnvironment.take("WATCHDOG_USEC")
        let watchdogPID = ProcessEnvironment.take("WATCHDOG_PID")
        guard let socket, !socket.isEmpty else { return (nil, nil) }
        guard socket.hasPrefix("/") || socket.hasPrefix("@"), socket.utf8.count <= maxAddressBytes else {
            return (nil, "NOTIFY_SOCKET=\(socket) is neither an absolute path nor an @abstract name that fits sockaddr_un; not notifying")
        }
        var watchdog: UInt64?
        if let usec, watchdogPID == nil || watchdogPID == String(pid) {
            guard let value = UInt64(usec), value > 0 else {
                return (Target(socket: socket, watchdogMicroseconds: nil), "WATCHDOG_USEC=\(usec) is not a positive number; no watchdog pings")
            }
            watchdog = value
        }
        return (Target(socket: socket, watchdogMicroseconds: watchdog), nil)
    }

    /// Sends `assignments` (e.g. `["READY=1", "STATUS=serving"]`) in one
    /// datagram. Newlines inside a value would start a new assignment, so
    /// they become spaces.
    func send(_ assignments: [String]) throws(NotifyError) {
        let message = assignments.map { $0.replacing("\n", with: " ") }.joined(separator: "\n")
        if fd < 0 {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 { throw NotifyError(operation: "socket", code: errno) }
        }
        var address = sockaddr_un()
        let length = Self.fill(&address, with: target.socket)
        let sent = message.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    // count - 1: the datagram carries no terminating NUL.
                    sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, length)
                }
            }
        }
        if sent < 0 { throw NotifyError(operation: "sendto \(target.socket)", code: errno) }
    }

    /// A failed send, with its errno.
    struct NotifyError: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation): \(String(cString: strerror(code)))" }
    }

    /// sun_path's size (108 on Linux); a path needs one byte for its NUL, an
    /// abstract name one for its leading NUL.
    private static let maxAddressBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Writes `name` into `address` and returns the address length to pass:
    /// for `@name`, a leading NUL and exactly the name's bytes (an abstract
    /// name is not NUL-terminated, and trailing zeros would be part of it).
    private static func fill(_ address: inout sockaddr_un, with name: String) -> socklen_t {
        address.sun_family = sa_family_t(AF_UNIX)
        let isAbstract = name.hasPrefix("@")
        let bytes = Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() where index < path.count {
                path[index] = isAbstract && index == 0 ? 0 : byte
            }
        }
        let familyBytes = MemoryLayout<sa_family_t>.size
        return socklen_t(familyBytes + bytes.count + (isAbstract ? 0 : 1))
    }
}
