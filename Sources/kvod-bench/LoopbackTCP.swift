#if canImport(Glibc)
import Glibc
#endif

/// Plain POSIX TCP on 127.0.0.1, for etcd's members (`kvod-bench cluster`):
/// free ports to start them on, connections to their JSON gateway, and one
/// blocking GET for their health.
enum LoopbackTCP {
    /// A connected, blocking stream socket to 127.0.0.1:`port`, with Nagle off
    /// (each request is written whole and waits for its reply).
    static func connect(port: Int) throws(BenchError) -> Int32 {
        let fd = try UnixSocket.connect(AF_INET, loopback(port: port), naming: "127.0.0.1:\(port)")
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// `count` distinct ports the kernel just handed out and released (another
    /// process could take one first: then a member fails to start and says so).
    static func freePorts(_ count: Int) throws(BenchError) -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw BenchError("socket(): \(UnixSocket.errorText())") }
            sockets.append(fd)
            var address = loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard bound else { throw BenchError("binding 127.0.0.1:0: \(UnixSocket.errorText())") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    /// `GET path` with `Connection: close`: the whole response, or nil when
    /// nothing answers within 2 s.
    static func get(port: Int, path: String) -> String? {
        request(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    }

    /// `POST path` of the JSON `body` with `Connection: close`, as ``get(port:path:)``.
    static func post(port: Int, path: String, body: String) -> String? {
        request(port: port, "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    private static func request(port: Int, _ text: String) -> String? {
        guard let fd = try? connect(port: port) else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(text.utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            return nil
        }
        var response: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 4096)
        while response.count < 1 << 20 {
            let n = scratch.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            response += scratch[..<n]
        }
        return response.isEmpty ? nil : String(decoding: response, as: UTF8.self)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
