/// The part of a JSON string that is not a plain ASCII run: its checks
/// (UTF-8, escapes, control characters) and the decoding of its escapes.
///
/// Shared by ``JSONReader`` and the request scanner, which reads a string with
/// escapes or non-ASCII text in place rather than through a second reader (a
/// reader's set-up and its value dispatch were a fifth of such a string's cost).
@usableFromInline
package enum JSONStringBody {
    /// Checks the string from `position` (past its opening quote, or anywhere
    /// inside it) up to its closing quote, and leaves `position` just past
    /// that quote. Returns where its first escape is, nil when it has none.
    package static func validate(_ bytes: UnsafeRawBufferPointer, from position: inout Int) throws(JSONError) -> Int? {
        var firstEscape: Int?
        while true {
            position = JSONStringScan.endOfPlainRun(in: bytes, from: position, asciiOnly: true)
            guard position < bytes.count else { throw .unexpectedEnd(at: position) }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return firstEscape
            } else if byte == UInt8(ascii: "\\") {
                if firstEscape == nil { firstEscape = position }
                try skipEscape(bytes, at: &position)
            } else if byte < 0x20 {
                throw .controlCharacter(byte, at: position)
            } else {
                try skipUTF8Sequence(bytes, at: &position)
            }
        }
    }

    /// The text of `range`, checked by ``validate(_:from:)``, as a `String`:
    /// copied as it is up to `firstEscape` (all of it when nil), its escapes
    /// decoded from there. Escapes only shorten text, so the escaped length
    /// is room enough, and up to 15 bytes make a small string with no allocation.
    package static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, firstEscape: Int?) -> String {
        String(unsafeUninitializedCapacity: range.count) { buffer in
            let plainEnd = firstEscape ?? range.upperBound
            UnsafeMutableRawBufferPointer(buffer).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: bytes[range.lowerBound..<plainEnd]))
            var written = plainEnd - range.lowerBound
            var index = plainEnd
            while index < range.upperBound {
                let byte = bytes[index]
                guard byte == UInt8(ascii: "\\") else {
                    buffer[written] = byte
                    written += 1
                    index += 1
                    continue
                }
                if let decoded = simpleEscape(bytes[index + 1]) {
                    buffer[written] = decoded
                    written += 1
                    index += 2
                    continue
                }
                var scalar = UInt32(hex4(bytes, at: index + 2))
                index += 6
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10 | (UInt32(hex4(bytes, at: index + 2)) - 0xDC00))
                    index += 6
                }
                written += encodeUTF8(scalar, into: buffer, at: written)
            }
            return written
        }
    }

    /// Passes over one multi-byte UTF-8 sequence, checking it against the
    /// well-formed byte ranges of Unicode's Table 3-7: this rejects overlong forms,
    /// UTF-8-encoded surrogates, code points above U+10FFFF and truncated sequences.
    private static func skipUTF8Sequence(_ bytes: UnsafeRawBufferPointer, at position: inout Int) throws(JSONError) {
        let lead = bytes[position]
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        let continuations: Int
        switch lead {
        case 0xC2...0xDF: continuations = 1
        case 0xE0: continuations = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: continuations = 2
        case 0xED: continuations = 2; high = 0x9F
        case 0xF0: continuations = 3; low = 0x90
        case 0xF1...0xF3: continuations = 3
        case 0xF4: continuations = 3; high = 0x8F
        default: throw .invalidUTF8(at: position)
        }
        guard position + continuations < bytes.count else { throw .invalidUTF8(at: position) }
        let second = bytes[position + 1]
        guard second >= low && second <= high else { throw .invalidUTF8(at: position) }
        var index = 2
        while index <= continuations {
            guard bytes[position + index] & 0xC0 == 0x80 else { throw .invalidUTF8(at: position) }
            index += 1
        }
        position += continuations + 1
    }

    /// Passes over the escape at `position`, checking it. `\\u` escapes must
    /// form whole scalars: a high surrogate needs a low one right after it.
    private static func skipEscape(_ bytes: UnsafeRawBufferPointer, at position: inout Int) throws(JSONError) {
        let escapeStart = position
        guard position + 1 < bytes.count else { throw .unexpectedEnd(at: bytes.count) }
        let kind = bytes[position + 1]
        position += 2
        if simpleEscape(kind) != nil { return }
        guard kind == UInt8(ascii: "u") else { throw .invalidEscape(at: escapeStart) }
        let unit = try parseHex4(bytes, at: &position, escapeStart: escapeStart)
        if unit >= 0xDC00 && unit <= 0xDFFF { throw .loneSurrogate(unit, at: escapeStart) }
        guard unit >= 0xD800 && unit <= 0xDBFF else { return }
        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
        else { throw .loneSurrogate(unit, at: escapeStart) }
        position += 2
        let low = try parseHex4(bytes, at: &position, escapeStart: position - 2)
        guard low >= 0xDC00 && low <= 0xDFFF else { throw .loneSurrogate(unit, at: escapeStart) }
    }

    /// The byte a two-character escape stands for (`\\n`: LF); nil for `u` and anything else.
    @inlinable @inline(__always)
    package static func simpleEscape(_ kind: UInt8) -> UInt8? {
        switch kind {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    private static func parseHex4(_ bytes: UnsafeRawBufferPointer, at position: inout Int,
                                  escapeStart: Int) throws(JSONError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw .invalidEscape(at: escapeStart) }
        for offset in 0..<4 where hexDigit(bytes[position + offset]) == nil { throw .invalidEscape(at: escapeStart) }
        defer { position += 4 }
        return hex4(bytes, at: position)
    }

    /// The four hex digits at `offset`, known to be valid.
    private static func hex4(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        var unit: UInt16 = 0
        for index in offset..<offset + 4 { unit = unit << 4 | UInt16(hexDigit(bytes[index]) ?? 0) }
        return unit
    }

    /// The value of one hex digit, either case; nil for another byte (HTTP's percent-decoding reads them too).
    package static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Writes `scalar` as UTF-8 at `offset`; returns how many bytes it took.
    private static func encodeUTF8(_ scalar: UInt32, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        switch scalar {
        case ..<0x80:
            buffer[offset] = UInt8(scalar)
            return 1
        case ..<0x800:
            buffer[offset] = UInt8(0xC0 | scalar >> 6)
            buffer[offset + 1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case ..<0x10000:
            buffer[offset] = UInt8(0xE0 | scalar >> 12)
            buffer[offset + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            buffer[offset + 2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            buffer[offset] = UInt8(0xF0 | scalar >> 18)
            buffer[offset + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            buffer[offset + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            buffer[offset + 3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
