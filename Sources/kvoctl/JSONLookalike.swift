/// Words that are not JSON but that someone surely meant as a number or a
/// JSON literal: taking them as strings would store `"1e400"` where a number
/// was wanted, silently.
enum JSONLookalike {
    /// `01`, `+1`, `1.`, `.5`, `1e400`, `-0x1F`, `NaN`, `-Infinity`, `True`, `NULL`…
    /// Dates (`2024-01-31`), versions (`1.2.3`) and words stay text.
    static func matches(_ word: Substring) -> Bool {
        let lowered = word.lowercased()
        if ["true", "false", "null", "nan", "inf", "infinity", "+inf", "-inf", "+infinity", "-infinity"]
            .contains(lowered) {
            return true
        }
        return looksNumeric(lowered)
    }

    /// An optional sign, then a hex/octal/binary literal, or digits with at
    /// most one point and an optional exponent.
    private static func looksNumeric(_ text: String) -> Bool {
        var rest = Substring(text)
        if let sign = rest.first, sign == "+" || sign == "-" { rest = rest.dropFirst() }
        if rest.count > 2, rest.hasPrefix("0x") || rest.hasPrefix("0o") || rest.hasPrefix("0b") {
            return rest.dropFirst(2).allSatisfy { $0.isHexDigit || $0 == "_" }
        }
        var mantissa = rest
        if let e = rest.firstIndex(of: "e") {
            mantissa = rest[..<e]
            var exponent = rest[rest.index(after: e)...]
            if let sign = exponent.first, sign == "+" || sign == "-" { exponent = exponent.dropFirst() }
            guard !exponent.isEmpty, exponent.allSatisfy(\.isASCIIDigit) else { return false }
        }
        let digits = mantissa.filter { $0 != "." }
        return !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit) && mantissa.count - digits.count <= 1
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
