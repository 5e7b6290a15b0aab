import Foundation
import KVOEngine
#if canImport(Glibc)
import Glibc
#endif

/// A blocking Unix-socket client that speaks kvod's line protocol: what a
/// script using `nc -U` would do, with deadlines instead of hope.
final class LineClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// The rest of a line that ``sendWithoutBlocking(_:)`` could only partly send.
    private(set) var unsent: [UInt8] = []

    init(path: String) throws {
        fd = try Self.connectSocket(path)
    }

    deinit { Glibc.close(fd) }

    static func canConnect(_ path: String) -> Bool {
        guard let fd = try? connectSocket(path) else { return false }
        Glibc.close(fd)
        return true
    }

    static func connectSocket(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
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
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestFailure("connect(\(path)) failed: errno \(code)")
        }
        return fd
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else {
                if errno == EINTR { continue }
                throw TestFailure("send failed: errno \(errno)")
            }
            offset += written
        }
    }

    func send(_ line: String) throws { try write(Array((line + "\n").utf8)) }

    /// Sends `bytes` unless the socket would block (then returns false and
    /// sends nothing). A partial send counts as sent; its rest is kept in
    /// ``unsent`` and goes out first next time, or with ``finishUnsent()``.
    func sendWithoutBlocking(_ bytes: [UInt8]) throws -> Bool {
        if !unsent.isEmpty {
            unsent = try sendSome(unsent)
            if !unsent.isEmpty { return false }
        }
        let rest = try sendSome(bytes)
        if rest.count == bytes.count { return false }
        unsent = rest
        return true
    }

    /// Sends what a partial ``sendWithoutBlocking(_:)`` left, blocking.
    func finishUnsent() throws {
        try write(unsent)
        unsent = []
    }

    private func sendSome(_ bytes: [UInt8]) throws -> [UInt8] {
        let written = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        if written < 0 {
            if errno == EAGAIN || errno == EINTR { return bytes }
            throw TestFailure("send failed: errno \(errno)")
        }
        return Array(bytes[written...])
    }

    /// Sends `count` requests made by `line(index)`, in batches written at
    /// once, and reads their replies, which must all be ok. For a client that
    /// observes nothing (events would be taken for replies).
    func pipeline(count: Int, batch: Int = 500, _ line: (Int) -> String) throws {
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            var bytes: [UInt8] = []
            for index in start..<end { bytes.append(contentsOf: (line(index) + "\n").utf8) }
            try write(bytes)
            for index in start..<end {
                let reply = try readJSON()
                if reply["ok"] != true { throw TestFailure("request \(index) failed: \(reply)") }
            }
            start = end
        }
    }

    /// The next line, or a failure after `timeout` seconds.
    func readLine(timeout: Double = 10) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line within \(timeout)s (have \(buffer.count) bytes)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno == ECONNRESET) { throw EndOfStream() }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw TestFailure("recv failed: errno \(errno)")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next line as JSON.
    func readJSON(timeout: Double = 10) throws -> JSONValue {
        let line = try readLine(timeout: timeout)
        do {
            return try JSONReader.parse(Array(line.utf8))
        } catch {
            throw TestFailure("kvod sent a line that is not JSON: \(line)")
        }
    }

    /// Sends one request and returns the lines up to and including its reply
    /// (events that came first are returned before it).
    func request(_ line: String, timeout: Double = 10) throws -> (events: [JSONValue], reply: JSONValue) {
        try send(line)
        var events: [JSONValue] = []
        while true {
            let message = try readJSON(timeout: timeout)
            if message["event"] != nil { events.append(message) } else { return (events, message) }
        }
    }

    /// Whether the server closed the connection within `timeout` seconds.
    func waitForEndOfStream(timeout: Double = 10) throws -> Bool {
        do {
            while true { _ = try readLine(timeout: timeout) }
        } catch is EndOfStream {
            return true
        }
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }
}

struct EndOfStream: Error {}

extension JSONValue {
    /// The member `key` of an object, or nil.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var intValue: Int? {
        if case .number(let number) = self { return number.intValue }
        return nil
    }

    var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }
}
