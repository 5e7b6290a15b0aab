import ArgumentParser
import KVOClient
import KVOEngine

/// A VALUE argument: JSON, or a bare word taken as a string.
enum ValueArgument {
    /// `42` → 42, `"42"` → "42", `xsc` → "xsc", `hello world` → "hello world".
    /// Text that starts like JSON (`{`, `[`, `"`) but does not parse is an
    /// error rather than a string: it was surely meant as JSON.
    static func parse(_ text: String) throws -> JSONValue {
        do {
            return try JSONReader.parse(text)
        } catch {
            let start = text.drop { $0 == " " || $0 == "\t" }.first
            if let start, "{[\"".contains(start) {
                throw ValidationError("VALUE \(text) is not valid JSON: \(error.message)")
            }
            return .string(text)
        }
    }

    static func parse(_ texts: [String]) throws -> [JSONValue] { try texts.map(parse) }
}
