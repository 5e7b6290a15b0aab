import ArgumentParser
import KVOClient
import KVOValues

/// A VALUE argument: JSON, or a bare word taken as a string.
enum ValueArgument {
    /// `42` → 42, `"42"` → "42", `xsc` → "xsc", `hello world` → "hello world".
    /// Text that is not JSON but was surely meant as JSON is an error rather
    /// than a string: it starts like JSON (`{`, `[`, `"`), or looks like a
    /// number or a JSON literal (`1e400`, `01`, `+1`, `NaN`, `True`).
    static func parse(_ text: String) throws(ValidationError) -> JSONValue {
        do {
            return try JSONReader.parse(text)
        } catch {
            let word = text.trimmingPrefix { $0 == " " || $0 == "\t" }
            if let start = word.first, "{[\"".contains(start) {
                throw ValidationError("VALUE \(text) is not valid JSON: \(error.message)")
            }
            if JSONLookalike.matches(word) {
                throw ValidationError("""
                    VALUE \(text) looks like JSON but is not (\(error.message)); quote it as a JSON string \
                    ('"\(text)"') or pass --string to take it as text
                    """)
            }
            return .string(text)
        }
    }
}
