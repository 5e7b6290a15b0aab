import KVOValues

extension JSONValue {
    /// The value as `--raw` prints it: a string as its text, without quotes
    /// or escapes (redis-cli's and etcdctl's raw output); anything else as
    /// compact JSON, as without `--raw`, so a number, `true`, `null`, an array
    /// or an object still reads back as what it is.
    var rawText: String {
        if case .string(let text) = self { return text }
        return jsonString
    }
}
