#if canImport(Glibc)
import Glibc
#endif

/// `kvod-crowd SOCKET COUNT KEYS`: holds COUNT connections to kvod, the i-th
/// observing key path `k<i % KEYS>` of object `crowd`, for tests that need
/// thousands of clients without holding thousands of descriptors themselves
/// (Foundation's `Process.run` over-reads /proc/self/fd when a process has
/// more than about a thousand open, and the test process starts many).
///
/// On stdout: `ready` once every observe is answered. On stdin, `expect E`:
/// reads E events on every connection, checks each is for that connection's
/// key, and answers `ok` or `error: …`. End of stdin closes everything.
@main
enum KVODCrowd {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let count = Int(arguments[2]), let keys = Int(arguments[3]), keys > 0 else {
            fail("usage: kvod-crowd SOCKET COUNT KEYS")
        }
        raiseOpenFilesLimit(to: count + 64)
        var connections: [Connection] = []
        connections.reserveCapacity(count)
        for index in 0..<count {
            guard let connection = Connection(path: arguments[1]) else { fail("connection \(index) failed: errno \(errno)") }
            connection.send(#"{"op":"observe","object":"crowd","keyPath":"k\#(index % keys)","options":["new"]}"#)
            connections.append(connection)
        }
        for (index, connection) in connections.enumerated() {
            guard let reply = connection.readLine(), reply.contains(#""ok":true"#) else { fail("observe \(index) failed") }
        }
        say("ready")
        while let command = readLine() {
            guard command.hasPrefix("expect "), let events = Int(command.dropFirst(7)) else { fail("unknown command \(command)") }
            var problem: String?
            for (index, connection) in connections.enumerated() where problem == nil {
                for _ in 0..<events {
                    guard let line = connection.readLine() else {
                        problem = "connection \(index) got too few events"
                        break
                    }
                    if !line.contains(#""keyPath":"k\#(index % keys)""#) { problem = "connection \(index) got \(line)" }
                }
            }
            say(problem.map { "error: \($0)" } ?? "ok")
        }
    }

    /// One line to stdout, written at once (no stdio buffering to flush).
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    static func fail(_ message: String) -> Never {
        say("error: \(message)")
        exit(1)
    }

    static func raiseOpenFilesLimit(to count: Int) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < rlim_t(count) {
            limit.rlim_cur = min(rlim_t(count), limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}

/// One blocking client connection with a read deadline.
final class Connection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init?(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// The next line, or nil after 20 s without one or at the end of the stream.
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 20_000) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
