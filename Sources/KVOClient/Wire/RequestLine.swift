import KVOEngine

/// One request as the line that goes on the wire:
/// `{"op":…,"object":…,…}\n`, written straight into bytes.
///
/// No `id`: replies come in request order (docs/PROTOCOL.md), and the
/// connection matches them to requests by that order alone.
struct RequestLine: Sendable {
    private var bytes: [UInt8]

    init(op: String) {
        bytes = []
        bytes.reserveCapacity(96)
        bytes.append(contentsOf: #"{"op":"#.utf8)
        JSONWriter.writeString(op, into: &bytes)
    }

    init(op: String, object: String, keyPath: String?) {
        self.init(op: op)
        string("object", object)
        if let keyPath { string("keyPath", keyPath) }
    }

    mutating func string(_ name: String, _ value: String) {
        appendName(name)
        JSONWriter.writeString(value, into: &bytes)
    }

    mutating func integer(_ name: String, _ value: Int) {
        appendName(name)
        JSONWriter.writeNumber(value, into: &bytes)
    }

    mutating func value(_ name: String, _ value: JSONValue) {
        appendName(name)
        JSONWriter.write(value, into: &bytes)
    }

    /// A member whose value is JSON text already (from ``JSONCoding``).
    mutating func encoded(_ name: String, _ json: [UInt8]) {
        appendName(name)
        bytes.append(contentsOf: json)
    }

    /// The line, `}` and newline included.
    var finished: [UInt8] { bytes + Array("}\n".utf8) }

    /// The request as a JSON object, without the newline: an element of a batch's `ops`.
    var jsonObject: [UInt8] { bytes + [UInt8(ascii: "}")] }

    private mutating func appendName(_ name: String) {
        bytes.append(UInt8(ascii: ","))
        JSONWriter.writeString(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}
