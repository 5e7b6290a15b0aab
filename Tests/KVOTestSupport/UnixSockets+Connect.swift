import Glibc

extension UnixSockets {
    /// Connects a new blocking AF_UNIX stream socket (close-on-exec) to
    /// `path` and returns its descriptor, which the caller closes. Throws
    /// with errno when nothing accepts connections there. The corresponding
    /// C functions are `socket` and `connect`.
    public static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var address = address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw TestFailure("connect(\(path)) failed: errno \(code)")
        }
        return fd
    }

    /// Whether something accepts connections at `path` (connects, then closes at once).
    public static func canConnect(_ path: String) -> Bool {
        guard let fd = try? connect(path) else { return false }
        close(fd)
        return true
    }

    /// The address of the socket file at `path` (cut to what fits, NUL-terminated).
    public static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return address
    }
}
