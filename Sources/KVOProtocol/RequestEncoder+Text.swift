extension RequestEncoder {
    /// Appends `string` as a JSON string: `"` and `\` escaped, control
    /// characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, everything else
    /// as its UTF-8 bytes. The same bytes as the engine's `JSONWriter`, so that
    /// a request reads the same whichever side wrote it.
    public static func appendString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = string.utf8
        if !utf8.contains(where: needsEscape) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                guard needsEscape(byte) else {
                    bytes.append(byte)
                    continue
                }
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    let hexDigits = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(hexDigits[Int(byte >> 4)])
                    bytes.append(hexDigits[Int(byte & 0xF)])
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an integer's decimal digits, `-` first if negative.
    public static func appendDecimal(_ value: some BinaryInteger, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var remaining = UInt64(value.magnitude)
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        bytes.append(contentsOf: digits.reversed())
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
