/// Why a JSON text was rejected, and where.
///
/// `message` is a complete sentence fragment meant for people, position included
/// (`invalid UTF-8 in string at byte 12`), so it can go back to a client as is.
/// `offset` carries the same position for code: the zero-based byte offset into
/// the input at which the problem was found.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and where, e.g. `duplicate member "a" at byte 7`.
    public let message: String
    /// Zero-based byte offset into the input where the problem was found.
    public let offset: Int

    /// Creates an error with `message` exactly as given.
    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// Creates an error whose message is `reason` followed by ` at byte <offset>`.
    public init(_ reason: String, at offset: Int) {
        self.message = "\(reason) at byte \(offset)"
        self.offset = offset
    }

    public var description: String { message }
}

// The reader's vocabulary of failures, kept in one place so the wording stays
// consistent and tests can rely on it.
extension JSONError {
    static func unexpectedEnd(at offset: Int) -> JSONError {
        JSONError("unexpected end of input", at: offset)
    }

    /// Names printable ASCII bytes as characters too: `'x'` is quicker to
    /// recognise in a request than `0x78`.
    static func unexpectedByte(_ byte: UInt8, at offset: Int, expecting: String? = nil) -> JSONError {
        var reason = "unexpected byte 0x" + hex(byte, digits: 2)
        if byte >= 0x21 && byte < 0x7F {
            reason += " ('\(Character(Unicode.Scalar(byte)))')"
        }
        if let expecting { reason += ", expected \(expecting)" }
        return JSONError(reason, at: offset)
    }

    static func invalidUTF8(at offset: Int) -> JSONError {
        JSONError("invalid UTF-8 in string", at: offset)
    }

    static func controlCharacter(_ byte: UInt8, at offset: Int) -> JSONError {
        JSONError("unescaped control character 0x\(hex(byte, digits: 2)) in string", at: offset)
    }

    static func invalidEscape(at offset: Int) -> JSONError {
        JSONError("invalid escape sequence in string", at: offset)
    }

    static func loneSurrogate(_ unit: UInt16, at offset: Int) -> JSONError {
        JSONError("lone surrogate escape \\u\(hex(unit, digits: 4)) in string", at: offset)
    }

    static func tooDeep(_ maxDepth: Int, at offset: Int) -> JSONError {
        JSONError("nesting deeper than \(maxDepth)", at: offset)
    }

    package static func duplicateMember(_ name: String, at offset: Int) -> JSONError {
        JSONError("duplicate member \"\(name)\"", at: offset)
    }

    static func invalidNumber(_ what: String, at offset: Int) -> JSONError {
        JSONError("invalid number: \(what)", at: offset)
    }

    static func numberOutOfRange(at offset: Int) -> JSONError {
        JSONError("number out of range", at: offset)
    }

    /// Upper-case hex digits, `width` of them at least.
    private static func hex(_ value: some BinaryInteger, digits width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
