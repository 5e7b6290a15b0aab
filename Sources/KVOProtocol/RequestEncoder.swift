/// Writes one request line, `{"op":…,"object":…,…}\n`, straight into bytes:
/// the one request encoder of KVOClient, kvoctl (through KVOClient) and
/// kvod-bench.
///
/// Members come out in the order they are added, compact (no spaces), strings
/// escaped as kvod's own writer escapes them; a value that is JSON text
/// already goes in as it is (``json(_:_:)``).
public struct RequestEncoder: Sendable {
    /// The line so far: `{`, the op and the members added, without the closing `}`.
    public private(set) var bytes: [UInt8]

    /// Starts `{"op":"<op>"`, or `{"id":<id>,"op":"<op>"` with an id (as typed into
    /// socat); KVOClient sends none and matches replies by their order.
    public init(op: Op, id: Int? = nil) {
        bytes = []
        bytes.reserveCapacity(96)
        bytes.append(UInt8(ascii: "{"))
        if let id {
            Self.appendString(Field.id.rawValue, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            Self.appendDecimal(id, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        Self.appendString(Field.op.rawValue, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendString(op.rawValue, to: &bytes)
    }

    /// Starts a request about `object`, and `keyPath` unless nil (the whole document).
    public init(op: Op, id: Int? = nil, object: String, keyPath: String?) {
        self.init(op: op, id: id)
        string(.object, object)
        if let keyPath { string(.keyPath, keyPath) }
    }

    /// Adds `"<field>":"<value>"`.
    public mutating func string(_ field: Field, _ value: String) {
        member(field)
        Self.appendString(value, to: &bytes)
    }

    /// Adds `"<field>":<value>`.
    public mutating func integer(_ field: Field, _ value: some BinaryInteger) {
        member(field)
        Self.appendDecimal(value, to: &bytes)
    }

    /// Adds `"<field>":true` or `false`.
    public mutating func bool(_ field: Field, _ value: Bool) {
        member(field)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Adds `"<field>":["<value>",…]`.
    public mutating func strings(_ field: Field, _ values: [String]) {
        array(field, values, Self.appendString)
    }

    /// Adds `"<field>":[<value>,…]`.
    public mutating func integers(_ field: Field, _ values: [Int]) {
        array(field, values) { Self.appendDecimal($0, to: &$1) }
    }

    /// Adds a member whose value is JSON text already (a client's own encoding).
    public mutating func json(_ field: Field, _ text: some Sequence<UInt8>) {
        json(named: field.rawValue, text)
    }

    /// Adds a member by a name the caller was given (a request passed on as
    /// written, whose unknown member kvod names), its value JSON text already.
    public mutating func json(named name: String, _ text: some Sequence<UInt8>) {
        bytes.append(UInt8(ascii: ","))
        Self.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: text)
    }

    /// Opens a member, `,"<field>":`, for a caller that writes its value
    /// itself (kvod-bench writes each change's payload on its hot path).
    public mutating func member(_ field: Field) {
        json(named: field.rawValue, EmptyCollection())
    }

    private mutating func array<Element>(_ field: Field, _ values: [Element],
                                         _ write: (Element, inout [UInt8]) -> Void) {
        member(field)
        bytes.append(UInt8(ascii: "["))
        for (position, value) in values.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            write(value, &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// The whole line, `}` and newline included.
    public var line: [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(bytes.count + 2)
        line.append(contentsOf: bytes)
        line.append(UInt8(ascii: "}"))
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// The request as a JSON object, without the newline: an element of a batch's `ops`.
    public var jsonObject: [UInt8] { bytes + [UInt8(ascii: "}")] }
}
