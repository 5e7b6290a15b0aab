import KVOEngine
import KVOValues
import KVOProtocol

/// A request body as a value of a request line.
enum HTTPBody {
    /// The body's one JSON value, written compactly: a body is spliced into a
    /// line, so it may hold neither a line break nor members of its own
    /// (`1,"object":"other"`), and more than one value is refused.
    static func oneJSONValue(_ body: UnsafeRawBufferPointer) throws(HTTPRefusal) -> [UInt8] {
        guard !body.isEmpty else { throw HTTPRefusal(.badRequest, "the body must be a JSON value; it is empty") }
        return try value(body).jsonBytes
    }

    /// The body read as one JSON value (a batch's `{"ops":[…]}` too).
    static func value(_ body: UnsafeRawBufferPointer) throws(HTTPRefusal) -> JSONValue {
        do {
            return try JSONReader.parse(body)
        } catch {
            throw HTTPRefusal(.badJSON, "the body is not one JSON value: \(error)")
        }
    }
}
