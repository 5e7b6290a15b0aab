/// A request's `id`, as the engine echoes it in the reply. An integer or a
/// plain ASCII string stays the JSON text of the line, which is exactly what
/// writing its value would give: making a value of it and writing that back
/// cost a tenth of a set. Valid while the line is.
enum RequestID {
    /// The id's JSON text: a `-?[0-9]+` integer or a `"…"` string of printable ASCII without escapes.
    case text(UnsafeRawBufferPointer)
    case value(JSONValue)

    /// The id as a value (for an error reply, or a ``Request``).
    var value: JSONValue {
        switch self {
        case .value(let value):
            return value
        case .text(let text):
            guard text.first == UInt8(ascii: "\"") else {
                return .number(JSONNumber(validatedLiteral: RequestScanner.string(text)))
            }
            return .string(RequestScanner.string(UnsafeRawBufferPointer(rebasing: text.dropFirst().dropLast())))
        }
    }

    /// Appends the id's JSON, as ``JSONWriter`` writes its value.
    func write(to bytes: inout ByteBuffer) {
        switch self {
        case .text(let text): bytes.append(bytes: text)
        case .value(let value): JSONWriter.write(value, to: &bytes)
        }
    }
}
