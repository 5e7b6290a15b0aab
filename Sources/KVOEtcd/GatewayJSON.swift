import KVOValues

/// Reading etcd's JSON gateway: proto3's JSON mapping, where int64 fields are
/// strings, bytes are base64, and fields at their default (0, false, empty)
/// are left out.
extension JSONValue {
    /// An int64 field (a string, or a number from a lenient writer); 0 when absent.
    func int64(_ name: String) throws(EtcdError) -> Int64 {
        try Self.int64(member(name), name)
    }

    /// `value`, the member `name`, as an int64 field.
    static func int64(_ value: JSONValue?, _ name: String) throws(EtcdError) -> Int64 {
        switch value {
        case nil, .null?: return 0
        case .string(let text)?:
            guard let value = Int64(text) else { throw .malformedResponse("\(name) is not an int64: \(text)") }
            return value
        case .number(let number)?:
            guard let value = Int64(number.literal) else { throw .malformedResponse("\(name) is not an int64: \(number)") }
            return value
        case let other?: throw .malformedResponse("\(name) is a \(other.typeName), expected an int64")
        }
    }

    /// A bytes field; empty when absent.
    func bytes(_ name: String) throws(EtcdError) -> [UInt8] {
        try Self.bytes(member(name), name)
    }

    /// `value`, the member `name`, as a bytes field.
    static func bytes(_ value: JSONValue?, _ name: String) throws(EtcdError) -> [UInt8] {
        switch value {
        case nil, .null?: return []
        case .string(let text)?:
            guard let bytes = Base64.decode(text) else { throw .malformedResponse("\(name) is not base64") }
            return bytes
        case let other?: throw .malformedResponse("\(name) is a \(other.typeName), expected base64 bytes")
        }
    }

    /// A bool field; false when absent (or not a bool).
    func flag(_ name: String) -> Bool { member(name) == .bool(true) }

    /// An array field; empty when absent.
    func list(_ name: String) -> [JSONValue] {
        if case .array(let elements)? = member(name) { return elements }
        return []
    }
}

/// Writing requests: int64 as strings, bytes as base64, as the gateway reads them.
extension JSONValue {
    static func int64(_ value: Int64) -> JSONValue { .string(String(value)) }
    static func bytes(_ value: [UInt8]) -> JSONValue { .string(Base64.encode(value)) }
}
