#if canImport(Glibc)
import Glibc
#endif
import KVOProtocol

/// Reads kvod's line protocol just far enough to count replies and take the
/// payload out of change events. Not a JSON parser: it relies on the event
/// layout that docs/PROTOCOL.md specifies (`{"event":"change","object":…`,
/// or a compact event's `{"o":N,…`).
///
/// A compact event names its observation, not its object: its key is the
/// observation's number − 1, which is the key's own where a connection
/// observes keys 0, 1, … in that order, as the fan-out scenarios do (one key each).
enum KVODParser {
    static func parse<H: InboundHandler>(_ bytes: UnsafeRawBufferPointer, _ handler: H) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var start = 0
        let count = bytes.count
        while start < count, let newline = memchr(base + start, 10, count - start) {
            let end = UnsafeRawPointer(newline) - base
            line(UnsafeRawBufferPointer(start: base + start, count: end - start), handler)
            start = end + 1
        }
        return start
    }

    private static let eventStart = bytes(LineFragment.changeEventStart) + [UInt8(ascii: "\"")]
    /// `"new":"`: a string value's start (the payload's), without the member's comma.
    private static let newMember = Array(bytes(LineFragment.newMember).dropFirst()) + [UInt8(ascii: "\"")]
    private static let okTrue = [UInt8(ascii: "{")] + bytes(LineFragment.okTrue)
    private static let idStart = bytes(LineFragment.idStart)
    private static let okTrueAfterID = [UInt8(ascii: ",")] + bytes(LineFragment.okTrue)

    private static func bytes(_ fragment: StaticString) -> [UInt8] { Array(fragment.description.utf8) }

    /// Whether a reply is a success: `{"ok":true…`, or `{"id":N,"ok":true…`
    /// for the shapes whose requests carry an (integer) id.
    @inline(__always)
    private static func isOK(_ line: UnsafeRawBufferPointer) -> Bool {
        guard hasPrefix(line, idStart) else { return hasPrefix(line, okTrue) }
        var position = idStart.count
        _ = readNumber(line, &position)
        let rest = UnsafeRawBufferPointer(rebasing: line[position...])
        return hasPrefix(rest, okTrueAfterID)
    }

    private static let compactStart = bytes(LineFragment.compactEventStart)

    @inline(__always)
    private static func line<H: InboundHandler>(_ line: UnsafeRawBufferPointer, _ handler: H) {
        // `{"e…` is an event, `{"o":` a compact one (`{"ok"` and `{"id"` are replies).
        let compact = line.count > 3 && line[2] == UInt8(ascii: "o") && line[3] == UInt8(ascii: "\"")
        guard line.count > 2, line[2] == UInt8(ascii: "e") || compact else {
            handler.reply(ok: isOK(line), line: line)
            return
        }
        var position: Int
        let key: Int
        if compact {
            position = compactStart.count
            let number = readNumber(line, &position)
            key = number > 0 ? number - 1 : -1
        } else {
            guard hasPrefix(line, eventStart) else {
                handler.reply(ok: false, line: line)
                return
            }
            position = eventStart.count
            key = readKey(line, &position)
        }
        guard let found = find(newMember, in: line, from: position) else {
            handler.event(key: key, index: -1, sentAt: 0)
            return
        }
        var cursor = found + newMember.count
        let index = readNumber(line, &cursor)
        cursor += 1
        let sentAt = readNumber(line, &cursor)
        handler.event(key: key, index: index, sentAt: UInt64(max(sentAt, 0)))
        if let count = trailingCoalesced(line) { handler.coalesced(count) }
    }

    private static let coalescedMember = bytes(LineFragment.coalescedMember)

    /// N of a line that ends `,"coalesced":N}` (the member kvod puts last), read from the end.
    @inline(__always)
    static func trailingCoalesced(_ line: UnsafeRawBufferPointer) -> Int? {
        var end = line.count - 1
        guard end > coalescedMember.count, line[end] == UInt8(ascii: "}") else { return nil }
        var start = end
        while start > 0, line[start - 1] >= 48, line[start - 1] <= 57 { start -= 1 }
        guard start < end, start >= coalescedMember.count else { return nil }
        let member = UnsafeRawBufferPointer(rebasing: line[(start - coalescedMember.count)..<start])
        guard hasPrefix(member, coalescedMember) else { return nil }
        end = start
        return readNumber(line, &end)
    }

    /// The number after the last `/` of the object name that starts at
    /// `position`; leaves `position` after the name's closing quote.
    @inline(__always)
    static func readKey(_ line: UnsafeRawBufferPointer, _ position: inout Int) -> Int {
        var key = -1
        while position < line.count {
            let byte = line[position]
            position += 1
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "/") {
                key = 0
            } else if key >= 0, byte >= 48, byte <= 57 {
                key = key &* 10 &+ Int(byte &- 48)
            }
        }
        return key
    }

    /// Decimal digits at `position`, -1 if there are none.
    @inline(__always)
    static func readNumber(_ bytes: UnsafeRawBufferPointer, _ position: inout Int) -> Int {
        var value = 0
        var digits = 0
        while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
            value = value &* 10 &+ Int(bytes[position] &- 48)
            position += 1
            digits += 1
        }
        return digits > 0 ? value : -1
    }

    /// Where `needle` (`"new":"`) first occurs in `bytes` at or after
    /// `start`: memchr finds each `w`, rare in an event, and the bytes around
    /// it are compared. The observers parse millions of events a second, and
    /// a byte-by-byte search made the generator, not the server, the bottleneck.
    @inline(__always)
    static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let anchor = 3  // the index of `w` in `"new":"`
        var position = start + anchor
        while position < bytes.count, let hit = memchr(base + position, Int32(needle[anchor]), bytes.count - position) {
            let found = UnsafeRawPointer(hit) - base - anchor
            if found + needle.count <= bytes.count,
               needle.withUnsafeBytes({ memcmp(base + found, $0.baseAddress!, needle.count) }) == 0 {
                return found
            }
            position = found + anchor + 1
        }
        return nil
    }

    @inline(__always)
    static func hasPrefix(_ line: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard line.count >= prefix.count else { return false }
        return prefix.withUnsafeBytes { memcmp(line.baseAddress!, $0.baseAddress!, prefix.count) == 0 }
    }
}
