// The string scanning of JSONReader: the ASCII fast path, UTF-8 validation and
// escapes. Kept apart from the structural reader in JSONReader.swift.

extension JSONReader {
    /// Reads the string whose opening quote is at `position`.
    ///
    /// Printable ASCII without escapes, the bulk of kvod's traffic, is found
    /// eight bytes at a time and copied once; anything else takes the
    /// validating slow path.
    mutating func parseString(materialize: Bool) throws(JSONError) -> String {
        let start = position + 1
        if let run = plainASCIIString() { return materialize ? makeString(run) : "" }
        return try parseStringSlowly(from: start, materialize: materialize)
    }

    /// Reads the string whose opening quote is at `position`, as raw bytes
    /// when it is printable ASCII without escapes.
    mutating func parseStringText() throws(JSONError) -> JSONText {
        let start = position + 1
        if let run = plainASCIIString() { return .plain(UnsafeRawBufferPointer(rebasing: bytes[run])) }
        return .decoded(try parseStringSlowly(from: start, materialize: true))
    }

    /// Past the opening quote at `position`: the bytes of a printable ASCII
    /// string without escapes, with `position` after its closing quote; or
    /// nil, with `position` at the first byte the slow path must look at.
    private mutating func plainASCIIString() -> Range<Int>? {
        position += 1
        let start = position
        position = JSONStringScan.endOfPlainRun(in: bytes, from: start, asciiOnly: true)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        lastStringWasPlainASCII = true
        return start..<position - 1
    }

    /// Validates UTF-8 and escapes. Unescaped runs are copied in bulk, and a
    /// string without escapes is never copied into `scratch` at all.
    private mutating func parseStringSlowly(from start: Int, materialize: Bool) throws(JSONError) -> String {
        lastStringWasPlainASCII = false
        var runStart = start
        var hasEscapes = false
        scratch.removeAll(keepingCapacity: true)
        while true {
            guard position < bytes.count else { throw .unexpectedEnd(at: position) }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                guard materialize else { return "" }
                guard hasEscapes else { return makeString(runStart..<position - 1) }
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<position - 1]))
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                if materialize { scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<position])) }
                hasEscapes = true
                try parseEscape(materialize: materialize)
                runStart = position
            } else if byte < 0x20 {
                throw .controlCharacter(byte, at: position)
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// Passes over one multi-byte UTF-8 sequence, checking it against the
    /// well-formed byte ranges of Unicode's Table 3-7: this rejects overlong forms,
    /// UTF-8-encoded surrogates, code points above U+10FFFF and truncated sequences.
    private mutating func skipUTF8Sequence() throws(JSONError) {
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

    /// Decodes the escape at `position` into `scratch`. `\u` escapes must form
    /// whole scalars: a high surrogate needs a low one right after it.
    private mutating func parseEscape(materialize: Bool) throws(JSONError) {
        let escapeStart = position
        guard position + 1 < bytes.count else { throw .unexpectedEnd(at: bytes.count) }
        let decoded: UInt8
        switch bytes[position + 1] {
        case UInt8(ascii: "\""): decoded = 0x22
        case UInt8(ascii: "\\"): decoded = 0x5C
        case UInt8(ascii: "/"): decoded = 0x2F
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"):
            position += 2
            let unit = try parseHex4(escapeStart: escapeStart)
            var scalar = UInt32(unit)
            if unit >= 0xDC00 && unit <= 0xDFFF { throw .loneSurrogate(unit, at: escapeStart) }
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw .loneSurrogate(unit, at: escapeStart) }
                position += 2
                let low = try parseHex4(escapeStart: position - 2)
                guard low >= 0xDC00 && low <= 0xDFFF else { throw .loneSurrogate(unit, at: escapeStart) }
                scalar = 0x10000 + (UInt32(unit - 0xD800) << 10 | UInt32(low - 0xDC00))
            }
            if materialize { appendUTF8(scalar) }
            return
        default:
            throw .invalidEscape(at: escapeStart)
        }
        position += 2
        if materialize { scratch.append(decoded) }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw .invalidEscape(at: escapeStart) }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidEscape(at: escapeStart)
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
