import Glibc

/// A connected Unix stream socket: with ``SocketOwnership``, the only code in
/// KVOClient that makes system calls.
///
/// Blocking descriptor: the connection reads it on its own thread and writes
/// it from one serial queue, so neither blocks a caller.
struct UnixSocket: Sendable, Equatable {
    let descriptor: Int32

    /// Connects to the configuration's socket, checking first who owns it
    /// when it is the default one (``SocketOwnership``).
    static func connect(_ configuration: KVOConnection.Configuration) throws(KVOClientError) -> UnixSocket {
        if configuration.checksSocketOwnership { try SocketOwnership.verify(configuration.socketPath) }
        return try connect(path: configuration.socketPath)
    }

    /// Connects to `path`. The corresponding C functions are `socket` and `connect`.
    static func connect(path: String) throws(KVOClientError) -> UnixSocket {
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw KVOClientError(.cannotConnect, "socket path \(path) is longer than \(capacity - 1) bytes")
        }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KVOClientError(.cannotConnect, "socket(): \(errorText(errno))") }
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw KVOClientError(.cannotConnect, "cannot connect to \(path): \(errorText(code))")
        }
        return UnixSocket(descriptor: fd)
    }

    /// Writes all of `bytes`; false when the socket is broken. Never raises SIGPIPE.
    func sendAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Reads what is there (blocking until something is): the byte count, 0 at
    /// the end of the stream, or `connectionLost` with errno's text.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, KVOClientError> {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return .success(count) }
            if errno == EINTR { continue }
            return .failure(KVOClientError(.connectionLost, "reading from kvod failed: \(Self.errorText(errno))"))
        }
    }

    /// Ends both directions: a blocked `receive` returns 0 and writes fail.
    func shutdown() { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    func close() { _ = Glibc.close(descriptor) }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
