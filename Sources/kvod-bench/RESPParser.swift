#if canImport(Glibc)
import Glibc
#endif

/// Reads the RESP2 frames Redis sends the benchmark: `+OK`, `:n`, `-ERR …`,
/// and pub/sub pushes `*3 $7 message $n <channel> $m <payload>` and
/// `*3 $9 subscribe $n <channel> :count`.
enum RESPParser {
    static func parse<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, _ handler: H) -> Int {
        var position = 0
        while position < bytes.count {
            guard let next = frame(bytes, from: position, handler) else { break }
            position = next
        }
        return position
    }

    /// Handles the frame at `start`; returns where the next one starts, or
    /// nil when the frame is not complete yet.
    @inline(__always)
    private static func frame<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, from start: Int,
                                                 _ handler: H) -> Int? {
        guard let lineEnd = endOfLine(bytes, from: start) else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "+"), UInt8(ascii: ":"):
            handler.reply(ok: true, line: UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd]))
            return lineEnd + 2
        case UInt8(ascii: "*"):
            var cursor = start + 1
            let count = KVODParser.readNumber(bytes, &cursor)
            var position = lineEnd + 2
            // Three elements: kind, channel, payload (or subscription count).
            var kind = 0..<0, channel = 0..<0, payload = 0..<0
            for element in 0..<max(count, 0) {
                guard let found = bulk(bytes, from: position) else { return nil }
                switch element {
                case 0: kind = found.start..<found.end
                case 1: channel = found.start..<found.end
                case 2: payload = found.start..<found.end
                default: break
                }
                position = found.next
            }
            deliver(bytes, count: count, kind: kind, channel: channel, payload: payload, handler)
            return position
        default:
            handler.reply(ok: false, line: UnsafeRawBufferPointer(rebasing: bytes[start..<lineEnd]))
            return lineEnd + 2
        }
    }

    @inline(__always)
    private static func deliver<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, count: Int, kind: Range<Int>,
                                                   channel: Range<Int>, payload: Range<Int>, _ handler: H) {
        guard count == 3, kind.count == 7, bytes[kind.lowerBound] == UInt8(ascii: "m") else {
            // A subscribe confirmation answers the request that asked for it.
            let ok = count == 3 && kind.count == 9 && bytes[kind.lowerBound] == UInt8(ascii: "s")
            handler.reply(ok: ok, line: UnsafeRawBufferPointer(rebasing: bytes[kind]))
            return
        }
        var cursor = channel.lowerBound
        let channelEnd = channel.upperBound
        var key = -1
        while cursor < channelEnd {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "/") {
                key = 0
            } else if key >= 0 {
                guard byte >= 48, byte <= 57 else { break }
                key = key &* 10 &+ Int(byte &- 48)
            }
            cursor += 1
        }
        var position = payload.lowerBound
        let index = KVODParser.readNumber(bytes, &position)
        var sentAt = 0
        if index >= 0, position < payload.upperBound {
            position += 1
            sentAt = KVODParser.readNumber(bytes, &position)
        }
        handler.event(key: key, index: index, sentAt: UInt64(max(sentAt, 0)))
    }

    /// A `$len\r\n<bytes>\r\n` (or `:n\r\n`) element at `position`.
    @inline(__always)
    private static func bulk(_ bytes: UnsafeRawBufferPointer, from position: Int)
        -> (start: Int, end: Int, next: Int)?
    {
        guard let lineEnd = endOfLine(bytes, from: position) else { return nil }
        if bytes[position] == UInt8(ascii: ":") { return (position + 1, lineEnd, lineEnd + 2) }
        var cursor = position + 1
        let length = KVODParser.readNumber(bytes, &cursor)
        let start = lineEnd + 2
        let end = start + max(length, 0)
        guard end + 2 <= bytes.count else { return nil }
        return (start, end, end + 2)
    }

    /// The index of the `\r` of the `\r\n` ending the line at `start`.
    @inline(__always)
    private static func endOfLine(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
              let newline = memchr(base + start, 10, bytes.count - start) else { return nil }
        return UnsafeRawPointer(newline) - base - 1
    }
}
