import KVOProtocol

/// The top-level `seq`, `event` and `ok` of an event line kvod wrote, found
/// in one pass over its bytes without building a value, since a watch frames
/// every event of every stream (docs/PERFORMANCE.md). Members of nested
/// objects (a value's own `seq`) are passed over; so are strings, escapes and all.
struct EventLineMembers {
    var seq: Int?
    /// The `event` member's name (a plain string, unescaped as kvod writes it).
    var event: Range<Int>?
    /// `"ok":false`: an error line.
    var failed = false

    private static let seqName = Array(Field.seq.rawValue.utf8)
    private static let eventName = Array(Field.event.rawValue.utf8)
    private static let okName = Array(Field.ok.rawValue.utf8)

    init(_ line: UnsafeRawBufferPointer) {
        var depth = 0
        var index = 0
        while index < line.count {
            switch line[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            case UInt8(ascii: "\""):
                let end = Self.endOfString(line, from: index)
                var next = end
                while next < line.count, line[next] == UInt8(ascii: " ") { next += 1 }
                if depth == 1, next < line.count, line[next] == UInt8(ascii: ":") {
                    readValue(of: UnsafeRawBufferPointer(rebasing: line[(index + 1)..<(end - 1)]), line, at: next + 1)
                }
                index = end
            default:
                index += 1
            }
        }
    }

    /// The index after the string that opens at `start`.
    private static func endOfString(_ line: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start + 1
        while index < line.count {
            switch line[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return line.count
    }

    private mutating func readValue(of key: UnsafeRawBufferPointer, _ line: UnsafeRawBufferPointer, at start: Int) {
        var index = start
        while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
        if key.elementsEqual(Self.seqName) {
            var value = 0, digits = 0
            while index < line.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(line[index]), digits < 18 {
                value = value * 10 + Int(line[index] - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            if digits > 0 { seq = value }
        } else if key.elementsEqual(Self.eventName), index < line.count, line[index] == UInt8(ascii: "\"") {
            let end = Self.endOfString(line, from: index)
            event = (index + 1)..<(end - 1)
        } else if key.elementsEqual(Self.okName) {
            failed = line.count - index >= 5 && line[index] == UInt8(ascii: "f")
        }
    }
}
