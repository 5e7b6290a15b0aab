import Glibc

/// Free TCP ports on 127.0.0.1, for servers a test starts (etcd members).
public enum LoopbackPorts {
    /// `count` distinct ports the kernel just handed out and released. Another
    /// process could take one before the caller binds it: rare, and then the
    /// server fails to start and says so.
    public static func free(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            // Every socket stays open until all are chosen, so no port comes twice.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
                }
            }
            guard bound else { throw TestFailure("binding 127.0.0.1:0 failed: errno \(errno)") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}
