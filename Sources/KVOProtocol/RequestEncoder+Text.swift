extension RequestEncoder {
    /// Appends `string` as a JSON string: `"` and `\` escaped, control
    /// characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, everything else
    /// as its UTF-8 bytes. The same bytes as the engine's `JSONWriter`, so that
    /// a request reads the same whichever side wrote it.
    public static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendString(utf8: $0, to: &bytes) }
    }

    /// ``appendString(_:to:)`` of text already in UTF-8: the runs between
    /// escapes go in whole (most strings are one run).
    static func appendString(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var run = 0
        for index in utf8.indices where needsEscape(utf8[index]) {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
            appendEscape(of: utf8[index], to: &bytes)
            run = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(of byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Appends an integer's decimal digits, `-` first if negative.
    @inlinable
    public static func appendDecimal(_ value: some BinaryInteger, to bytes: inout [UInt8]) {
        appendDecimal(magnitude: UInt64(value.magnitude), negative: value < 0, to: &bytes)
    }

    /// The digits written from the last, into a buffer on the stack.
    @usableFromInline
    static func appendDecimal(magnitude: UInt64, negative: Bool, to bytes: inout [UInt8]) {
        if negative { bytes.append(UInt8(ascii: "-")) }
        // UInt64.max has 20 digits.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var remaining = magnitude
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
