import Foundation
import Glibc

/// The peer closed the stream (or reset it) before the line that was waited for.
public struct EndOfStream: Error {
    public init() {}
}

/// Reads newline-terminated lines from a descriptor, a socket or a pipe, with
/// a deadline: the reading half of every line-speaking test client. Blocking;
/// for synchronous tests and helper processes.
public struct LineReader {
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Reads from `fd`, which stays the caller's to close.
    public init(fd: Int32) {
        self.fd = fd
    }

    /// How many bytes of `buffer` are known to hold no newline.
    private var scanned = 0

    /// The position of the first newline in `buffer`, searched from where the
    /// last search stopped (a long line arrives in many reads).
    private mutating func nextNewline() -> Int? {
        let found = buffer.withUnsafeBytes { bytes -> Int? in
            guard bytes.count > scanned,
                  let hit = memchr(bytes.baseAddress! + scanned, Int32(UInt8(ascii: "\n")), bytes.count - scanned) else {
                return nil
            }
            return UnsafeRawPointer(hit) - bytes.baseAddress!
        }
        if found == nil { scanned = buffer.count }
        return found
    }

    /// How many bytes have arrived after the last complete line.
    public var bufferedByteCount: Int { buffer.count }

    /// The next line, without its newline. Throws ``EndOfStream`` when the
    /// peer closed or reset the stream, and a ``TestFailure`` saying what was
    /// awaited (`what`) once `timeout` seconds pass.
    @available(*, noasync, message: "blocks a cooperative thread")
    public mutating func readLine(timeout: Double, what: @autoclosure () -> String = "a line") throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = nextNewline() {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                scanned = 0
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw TestFailure("no \(what()) within \(timeout)s (have \(buffer.count) bytes)")
            }
            // Wake at least once a second, so that the deadline is never overslept by much.
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1) <= 0 { continue }
            let (count, error) = withUnsafeTemporaryAllocation(byteCount: 65_536, alignment: 1) { chunk in
                let count = read(fd, chunk.baseAddress, chunk.count)
                let error = errno
                // As typed bytes, copied at once: a slice of raw bytes is
                // appended byte by byte in a debug build (a second per MB).
                if count > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]).bindMemory(to: UInt8.self)) }
                return (count, error)
            }
            if count == 0 || (count < 0 && error == ECONNRESET) { throw EndOfStream() }
            if count < 0 && error != EINTR && error != EAGAIN { throw TestFailure("read failed: errno \(error)") }
        }
    }
}
