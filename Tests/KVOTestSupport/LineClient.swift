import Foundation
import Glibc
import KVOValues

/// A blocking Unix-socket client that speaks kvod's line protocol: what a
/// script using `nc -U` would do, with deadlines instead of hope. For
/// synchronous tests (and the `kvod-crowd` helper): every call may block.
public final class LineClient {
    public let fd: Int32
    private var reader: LineReader
    /// The rest of a line that ``sendWithoutBlocking(_:)`` could only partly send.
    public private(set) var unsent: [UInt8] = []

    public init(path: String) throws {
        fd = try UnixSockets.connect(path)
        reader = LineReader(fd: fd)
    }

    deinit { Glibc.close(fd) }

    /// Writes all of `bytes`.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func write(_ bytes: [UInt8]) throws {
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

    @available(*, noasync, message: "blocks a cooperative thread")
    public func send(_ line: String) throws { try write(Array((line + "\n").utf8)) }

    /// Sends `bytes` unless the socket would block (then returns false and
    /// sends nothing). A partial send counts as sent; its rest is kept in
    /// ``unsent`` and goes out first next time, or with ``finishUnsent()``.
    public func sendWithoutBlocking(_ bytes: [UInt8]) throws -> Bool {
        if !unsent.isEmpty {
            unsent = try sendSome(unsent)
            if !unsent.isEmpty { return false }
        }
        let rest = try sendSome(bytes)
        if rest.count == bytes.count { return false }
        unsent = rest
        return true
    }

    /// Whether the socket can take more bytes within `timeout` seconds (the
    /// kernel says so: `poll` for `POLLOUT`), e.g. after
    /// ``sendWithoutBlocking(_:)`` returned false.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func waitUntilWritable(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000) + 1)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return false }
        }
    }

    /// Sends what a partial ``sendWithoutBlocking(_:)`` left, blocking.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func finishUnsent() throws {
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
    @available(*, noasync, message: "blocks a cooperative thread")
    public func pipeline(count: Int, batch: Int = 500, _ line: (Int) -> String) throws {
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

    /// The next line, or a failure after `timeout` seconds; ``EndOfStream``
    /// when kvod closed the connection.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func readLine(timeout: Double = 10) throws -> String {
        try reader.readLine(timeout: timeout)
    }

    /// The next line as JSON.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func readJSON(timeout: Double = 10) throws -> JSONValue {
        let line = try readLine(timeout: timeout)
        do {
            return try JSONReader.parse(Array(line.utf8), maxDepth: DocumentDepth.readerLimit)
        } catch {
            throw TestFailure("kvod sent a line that is not JSON: \(line)")
        }
    }

    /// Sends one request and returns the lines up to and including its reply
    /// (events that came first are returned before it).
    @available(*, noasync, message: "blocks a cooperative thread")
    public func request(_ line: String, timeout: Double = 10) throws -> (events: [JSONValue], reply: JSONValue) {
        try send(line)
        var events: [JSONValue] = []
        while true {
            let message = try readJSON(timeout: timeout)
            // A reply always has `ok`; an event never (a compact one has no `event` either).
            if message["ok"] == nil { events.append(message) } else { return (events, message) }
        }
    }

    /// Whether the server closed the connection within `timeout` seconds.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func waitForEndOfStream(timeout: Double = 10) throws -> Bool {
        do {
            while true { _ = try readLine(timeout: timeout) }
        } catch is EndOfStream {
            return true
        }
    }

    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
