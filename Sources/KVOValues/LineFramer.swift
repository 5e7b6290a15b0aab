#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines: pure, no I/O (after swift-nio-extras'
/// `LineBasedFrameDecoder`).
///
///     bytes in:  {"op":"ping"}\n{"op":"in  fo"}\r\n\n{"op
///     frames:    {"op":"ping"}   {"op":"info"}       (rest kept)
///
/// A line ends at `\n`; a `\r` before it is dropped; empty lines, and lines
/// of only JSON whitespace (space, tab, `\r`), are skipped.
/// A line whose content (without its `\n` or `\r\n`) is longer than
/// `maxLineBytes` is reported once as ``Frame/tooLarge`` as soon as it
/// crosses the limit, and the rest of it is discarded, not buffered, so
/// memory stays bounded whatever a client sends: at most `maxLineBytes + 1`
/// bytes are held, a line's content and a `\r` that may turn out to end it.
public struct LineFramer {
    public enum Frame {
        /// One complete line, without its terminator. Valid only during the callback.
        case line(UnsafeRawBufferPointer)
        /// A line went over the limit; its remaining bytes will be dropped.
        case tooLarge
    }

    public let maxLineBytes: Int
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// Set while dropping the rest of an oversized line.
    private var discarding = false

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes > 0)
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes held for an unfinished line (a trailing `\r` included).
    public var bufferedByteCount: Int { partial.count }

    /// Feeds `bytes` and calls `onFrame` for each frame they complete.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onFrame: (Frame) -> Void) {
        var start = 0
        let count = bytes.count
        while start < count {
            guard let newline = Self.firstNewline(in: bytes, from: start) else {
                keepPartial(UnsafeRawBufferPointer(rebasing: bytes[start...]), onFrame)
                return
            }
            if discarding {
                discarding = false
            } else if partial.isEmpty {
                let endsWithCR = newline > start && bytes[newline - 1] == Self.carriageReturn
                if isOverLimit(newline - start, endsWithCR: endsWithCR) {
                    onFrame(.tooLarge)
                } else {
                    emit(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]), onFrame)
                }
            } else {
                let endsWithCR = newline > start
                    ? bytes[newline - 1] == Self.carriageReturn : partial.last == Self.carriageReturn
                if isOverLimit(partial.count + (newline - start), endsWithCR: endsWithCR) {
                    onFrame(.tooLarge)
                } else {
                    partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                    partial.withUnsafeBytes { emit($0, onFrame) }
                }
                partial.removeAll(keepingCapacity: partial.capacity <= 65_536)
            }
            start = newline + 1
        }
    }

    private mutating func keepPartial(_ rest: UnsafeRawBufferPointer, _ onFrame: (Frame) -> Void) {
        guard !discarding else { return }
        // A `\r` at the end may be the first half of `\r\n`: not counted until more comes.
        if isOverLimit(partial.count + rest.count, endsWithCR: rest.last == Self.carriageReturn) {
            discarding = true
            partial = []
            onFrame(.tooLarge)
        } else {
            partial.append(contentsOf: rest)
        }
    }

    /// Whether `count` bytes of a line are more than it may hold: a `\r`
    /// that ends them belongs to the terminator, not to the content.
    private func isOverLimit(_ count: Int, endsWithCR: Bool) -> Bool {
        (endsWithCR ? count - 1 : count) > maxLineBytes
    }

    private static let carriageReturn = UInt8(ascii: "\r")

    private func emit(_ line: UnsafeRawBufferPointer, _ onFrame: (Frame) -> Void) {
        var line = line
        if let last = line.last, last == Self.carriageReturn {
            line = UnsafeRawBufferPointer(rebasing: line.dropLast())
        }
        if !Self.isBlank(line) { onFrame(.line(line)) }
    }

    /// Empty, or only JSON whitespace: nothing to answer, as most line
    /// protocols treat it. A request starts with `{`, so the scan stops at
    /// the first byte of almost every line.
    private static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == carriageReturn }
    }

    private static func firstNewline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count else { return nil }
        guard let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
