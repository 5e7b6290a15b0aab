import OrderedCollections

/// A JSON object: member names in the order they were first written.
public typealias JSONObject = OrderedDictionary<String, JSONValue>

/// A JSON document or fragment, as stored by kvod and carried on the wire.
///
/// Objects keep their members in insertion order, so a document reads back the
/// way it was written. Numbers keep their literal text (see ``JSONNumber``), so
/// integers beyond `Int64` travel through kvod unchanged.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number, held as its validated RFC 8259 literal.
///
/// kvod never does arithmetic on values; keeping the text means a number is
/// echoed exactly as a client wrote it, whatever its size.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number as it appears in JSON text, e.g. `-12.5e3`.
    public let literal: String

    /// Wraps a literal that the caller has already validated against RFC 8259.
    public init(validatedLiteral literal: String) {
        self.literal = literal
    }

    public init(_ value: Int) {
        self.literal = String(value)
    }

    public var description: String { literal }

    /// The value as an `Int`, when the literal is an integer that fits.
    public var intValue: Int? { Int(literal) }

    /// The value as a `Double` (the nearest one; may be infinite for huge literals).
    public var doubleValue: Double? { Double(literal) }
}

extension JSONValue {
    /// The kind of value, for error messages ("expected an array, found a string").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements, uniquingKeysWith: { first, _ in first }))
    }
}
