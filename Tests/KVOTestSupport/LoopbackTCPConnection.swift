import Foundation
import Glibc

/// A blocking TCP connection to a port on 127.0.0.1, for tests that speak
/// HTTP by hand (what curl would not send, or a reader that never reads).
public final class LoopbackTCPConnection {
    public let fd: Int32

    /// Connects; a receive waits at most `receiveTimeout` seconds.
    public init(port: UInt16, receiveTimeout: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
        var limit = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    public func send(_ text: String) { send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The next bytes that come, or nil once the peer closed, the connection
    /// failed or the receive timeout passed.
    public func receive(upTo count: Int = 65_536) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: count)
        let received = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return received > 0 ? Array(chunk[..<received]) : nil
    }
}
