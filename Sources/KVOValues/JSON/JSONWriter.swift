import OrderedCollections

/// Writes ``JSONValue``s as compact JSON text (UTF-8, no insignificant whitespace).
///
/// Output goes straight into a caller's `[UInt8]`, so a reply or event can be
/// assembled in one buffer without intermediate strings. Object members come out
/// in their stored order and numbers as their literal text, so a value read by
/// ``JSONReader`` is written back byte-for-byte as compactly as it was read.
public enum JSONWriter {
    /// Appends `value` as JSON to `buffer`.
    ///
    /// Recursive: fine for values from ``JSONReader``, whose depth is bounded by
    /// its `maxDepth`; a value built in code thousands of levels deep could
    /// exhaust the stack.
    @inlinable
    public static func write(_ value: JSONValue, into buffer: inout [UInt8]) {
        write(value, to: &buffer)
    }

    /// ``write(_:into:)`` into any byte sink (inlinable: specialized for each in the engine).
    @inlinable
    package static func write<Sink: ByteSink>(_ value: JSONValue, to buffer: inout Sink) {
        switch value {
        case .null:
            buffer.append(literal: "null")
        case .bool(let flag):
            if flag { buffer.append(literal: "true") } else { buffer.append(literal: "false") }
        case .number(let number):
            buffer.append(utf8: number.literal)
        case .string(let string):
            writeString(string, to: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                write(element, to: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members):
            buffer.append(UInt8(ascii: "{"))
            for index in members.keys.indices {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                writeString(members.keys[index], to: &buffer)
                buffer.append(UInt8(ascii: ":"))
                write(members.values[index], to: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `number`'s literal text, which ``JSONNumber`` guarantees is valid JSON.
    public static func writeNumber(_ number: JSONNumber, into buffer: inout [UInt8]) {
        buffer.append(utf8: number.literal)
    }

    /// Appends the decimal form of `number`.
    public static func writeNumber(_ number: Int, into buffer: inout [UInt8]) {
        buffer.append(decimal: number)
    }

    /// Appends `string` as a quoted JSON string.
    ///
    /// Escapes only what JSON requires: `"`, `\` and the control characters below
    /// U+0020 (as `\n`, `\r`, `\t`, `\b`, `\f`, or `\u00XX`). Everything else,
    /// non-ASCII included, is copied as UTF-8: shorter than `\u` escapes, and a
    /// Swift `String` is always valid UTF-8.
    @inlinable
    public static func writeString(_ string: String, into buffer: inout [UInt8]) {
        writeString(string, to: &buffer)
    }

    /// Whether `utf8` goes between a JSON string's quotes as it is (no byte
    /// to escape), and with `asciiOnly` whether it is ASCII as well; eight
    /// bytes at a time. For encoders outside this module (the history blob).
    @inline(__always)
    public static func isPlainString(_ utf8: UnsafeRawBufferPointer, asciiOnly: Bool = false) -> Bool {
        JSONStringScan.endOfPlainRun(in: utf8, from: 0, asciiOnly: asciiOnly) == utf8.count
    }

    /// ``writeString(_:into:)`` into any byte sink.
    @inlinable
    package static func writeString<Sink: ByteSink>(_ string: String, to buffer: inout Sink) {
        buffer.append(UInt8(ascii: "\""))
        // The native storage, borrowed: `withUTF8` is mutating, and the copy
        // it needs retained and released the string's storage every time.
        if string.utf8.withContiguousStorageIfAvailable({ appendEscaped($0, to: &buffer) }) == nil {
            var copy = string
            copy.withUTF8 { appendEscaped($0, to: &buffer) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// The body of a JSON string: runs of bytes that need no escaping are
    /// appended in bulk rather than byte by byte.
    @inlinable
    static func appendEscaped<Sink: ByteSink>(_ utf8: UnsafeBufferPointer<UInt8>, to buffer: inout Sink) {
        // Most strings need no escape: find the first byte that does a
        // word at a time, and copy the whole string at once if there is none.
        let clean = JSONStringScan.endOfPlainRun(in: UnsafeRawBufferPointer(utf8), from: 0, asciiOnly: false)
        if clean == utf8.count {
            buffer.append(bytes: UnsafeRawBufferPointer(utf8))
            return
        }
        var runStart = 0
        for index in clean..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            buffer.append(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[runStart..<index]))
            appendEscape(for: byte, into: &buffer)
            runStart = index + 1
        }
        buffer.append(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[runStart...]))
    }

    @inlinable
    static func appendEscape<Sink: ByteSink>(for byte: UInt8, into buffer: inout Sink) {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""): short = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): short = UInt8(ascii: "\\")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        default:
            let hexDigits: StaticString = "0123456789abcdef"
            buffer.append(literal: #"\u00"#)
            buffer.append(hexDigits.utf8Start[Int(byte >> 4)])
            buffer.append(hexDigits.utf8Start[Int(byte & 0xF)])
            return
        }
        buffer.append(UInt8(ascii: "\\"))
        buffer.append(short)
    }
}

extension JSONValue {
    /// The value as compact JSON, UTF-8 encoded.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        JSONWriter.write(self, into: &buffer)
        return buffer
    }

    /// The value as compact JSON text.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}
