#if canImport(Glibc)
import Glibc
#endif

/// A listening socket systemd passed to kvod (`kvod.socket`,
/// `systemd-socket-activate`): kvod adopts it instead of binding its own,
/// and leaves its file alone at shutdown, since systemd owns it.
struct ActivatedSocket: Sendable, Equatable {
    /// The descriptor, always `SocketActivation.firstDescriptor` (3).
    let fd: Int32
    /// The path it is bound to, from getsockname(2); nil for an abstract or
    /// unnamed socket.
    let path: String?
    /// Its name from `$LISTEN_FDNAMES` (`FileDescriptorName=`, default: the
    /// socket unit's name), if given.
    let name: String?
}

/// The receiving end of systemd's socket-passing protocol
/// (`sd_listen_fds(3)`): `$LISTEN_PID` names the process the descriptors are
/// for, `$LISTEN_FDS` counts them from descriptor 3 on, `$LISTEN_FDNAMES`
/// names them (colon-separated).
///
/// kvod serves one socket, so it accepts exactly one descriptor, and checks
/// that it is what kvod can serve: a listening `AF_UNIX` stream socket.
enum SocketActivation {
    static let firstDescriptor: Int32 = 3

    /// Reads and unsets the three variables (a process kvod started must not
    /// mistake them for its own). Nil when no descriptor was passed to this
    /// process: the variables are missing, or `$LISTEN_PID` is another
    /// process's. Call before other threads exist: `unsetenv` is not
    /// thread-safe.
    static func takeListeningSocket(pid: pid_t = getpid()) throws(DaemonError) -> ActivatedSocket? {
        let listenPID = ProcessEnvironment.take("LISTEN_PID")
        let listenFDs = ProcessEnvironment.take("LISTEN_FDS")
        let names = ProcessEnvironment.take("LISTEN_FDNAMES")
        guard let listenFDs, let listenPID, listenPID == String(pid) else { return nil }
        guard let count = Int(listenFDs), count >= 0 else {
            throw .cannotListen("LISTEN_FDS=\(listenFDs) is not a count of descriptors")
        }
        if count == 0 { return nil }
        let nameList = names?.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard count == 1 else {
            let listed = nameList.map { " (\($0.joined(separator: ", ")))" } ?? ""
            throw .cannotListen("systemd passed \(count) sockets\(listed); kvod serves one: give kvod.socket a single ListenStream=")
        }
        let fd = firstDescriptor
        try checkIsListeningUnixStream(fd)
        // sd_listen_fds does the same: the descriptor must not leak into children.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return ActivatedSocket(fd: fd, path: boundPath(of: fd), name: nameList?.first.flatMap { $0.isEmpty ? nil : $0 })
    }

    private static func checkIsListeningUnixStream(_ fd: Int32) throws(DaemonError) {
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw .cannotListen("LISTEN_FDS=1 but descriptor \(fd) is not open: \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & S_IFMT) == S_IFSOCK else {
            throw .cannotListen("descriptor \(fd) passed by systemd is not a socket")
        }
        guard intOption(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw .cannotListen("descriptor \(fd) passed by systemd is not a stream socket (use ListenStream=)")
        }
        guard intOption(fd, SO_ACCEPTCONN) == 1 else {
            throw .cannotListen("descriptor \(fd) passed by systemd is not listening (kvod needs Accept=no)")
        }
        guard family(of: fd) == AF_UNIX else {
            throw .cannotListen("descriptor \(fd) passed by systemd is not a Unix socket; kvod only serves AF_UNIX")
        }
    }

    private static func intOption(_ fd: Int32, _ option: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, option, &value, &length) == 0 ? value : nil
    }

    private static func family(of fd: Int32) -> Int32? {
        var address = sockaddr_un()
        return localAddress(of: fd, into: &address) ? Int32(address.sun_family) : nil
    }

    /// The socket file's path; nil for abstract (leading NUL) or unnamed sockets.
    private static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        guard localAddress(of: fd, into: &address) else { return nil }
        let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix { $0 != 0 }) }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    private static func localAddress(of fd: Int32, into address: inout sockaddr_un) -> Bool {
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
    }
}
