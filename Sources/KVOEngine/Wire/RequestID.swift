import KVOValues

/// A request's `id`, any JSON value, kept until its reply echoes it.
///
/// The ids clients usually send, an integer or a printable-ASCII string
/// without escapes, are kept as their JSON text in the value itself (up to
/// ``inlineCapacity`` bytes, no allocation) and copied into the reply as
/// they are: that text is exactly what writing the value would give. Any
/// other id is kept parsed and written by ``JSONWriter``. Either way the
/// reply echoes the same JSON text as before, for the same id.
public struct RequestID: Sendable {
    private enum Storage: Sendable {
        /// The JSON text's bytes, the first in the low byte of the first word;
        /// the high byte of the third is their count.
        case text(UInt64, UInt64, UInt64)
        /// Boxed: a `JSONValue` here would make the id a byte larger than
        /// `JSONValue?`, and every request pays for that byte where it is passed.
        case value(Box)
    }

    private final class Box: Sendable {
        let value: JSONValue
        init(_ value: JSONValue) { self.value = value }
    }

    private let storage: Storage

    /// The longest JSON text kept in the value itself (three words but the count's byte).
    static let inlineCapacity = 23

    /// An id that is any JSON value.
    public init(_ value: JSONValue) {
        storage = .value(Box(value))
    }

    /// The id whose JSON text is `text`: an integer literal, or a string of
    /// printable ASCII without escapes with its quotes, at most ``inlineCapacity`` bytes.
    @inline(__always)
    init(validatedText text: UnsafeRawBufferPointer) {
        // A byte at a time into the words: a short id costs less so than `memcpy`.
        var words: (UInt64, UInt64, UInt64) = (0, 0, UInt64(text.count) << 56)
        for index in 0..<text.count {
            let byte = UInt64(text[index]) << (UInt64(index & 7) << 3)
            switch index >> 3 {
            case 0: words.0 |= byte
            case 1: words.1 |= byte
            default: words.2 |= byte
            }
        }
        storage = .text(words.0, words.1, words.2)
    }

    /// The id whose JSON text, an integer literal of `count` bytes (at most
    /// eight), is `word`'s low bytes, the first lowest; the others zero.
    @inline(__always)
    init(validatedText word: UInt64, count: Int) {
        storage = .text(word, 0, UInt64(count) << 56)
    }

    /// The id as a JSON value.
    public var value: JSONValue {
        switch storage {
        case .value(let box):
            return box.value
        case .text:
            return withText { text in
                if text.first == UInt8(ascii: "\"") {
                    return .string(RequestScanner.string(UnsafeRawBufferPointer(rebasing: text.dropFirst().dropLast())))
                }
                return .number(JSONNumber(validatedLiteral: RequestScanner.string(text)))
            }
        }
    }

    /// Appends the id's JSON text to `output`.
    func write<Sink: ByteSink>(to output: inout Sink) {
        switch storage {
        case .value(let box): JSONWriter.write(box.value, to: &output)
        case .text: withText { output.append(bytes: $0) }
        }
    }

    /// The JSON text, when the id is kept as text: its bytes in three words,
    /// the first byte lowest (``ByteSink/append(_:words:count:_:)``), and
    /// their count. A reply copies them so, without copying the id.
    @inline(__always)
    var text: (words: (UInt64, UInt64, UInt64), count: Int)? {
        guard case .text(let first, let second, let third) = storage else { return nil }
        return ((first, second, third), Int(third >> 56))
    }

    /// The kept text, borrowed (only for an id kept as text).
    private func withText<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let (words, count) = text else { preconditionFailure("not kept as text") }
        return withUnsafeBytes(of: (words.0.littleEndian, words.1.littleEndian, words.2.littleEndian)) { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
    }
}

extension RequestID: Equatable {
    /// Ids are equal when their values are, however each is kept.
    public static func == (lhs: RequestID, rhs: RequestID) -> Bool {
        lhs.value == rhs.value
    }
}

extension RequestID: CustomStringConvertible {
    /// The id's JSON text, as a reply echoes it.
    public var description: String {
        var text: [UInt8] = []
        write(to: &text)
        return String(decoding: text, as: UTF8.self)
    }
}

extension RequestID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int) {
        self.init(.number(JSONNumber(value)))
    }

    public init(stringLiteral value: String) {
        self.init(.string(value))
    }
}
