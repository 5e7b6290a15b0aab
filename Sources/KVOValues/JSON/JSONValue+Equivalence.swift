extension JSONValue {
    /// Whether two values are the same JSON: objects member by member in any
    /// order, arrays element by element, numbers by numeric value (`1`,
    /// `1.0` and `10e-1` are one number, however many digits), strings by
    /// their Unicode scalars. What `ifValue` compares with.
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.number(let a), .number(let b)): return a.literal == b.literal || a.canonical == b.canonical
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            return a.allSatisfy { key, value in b[key].map { value.isEquivalent(to: $0) } ?? false }
        default: return false
        }
    }
}

extension JSONNumber {
    /// The number's exact value as (negative, significant digits without
    /// leading or trailing zeros, decimal exponent of the last digit): equal
    /// for equal numbers whatever their spelling. Zero is (false, "", 0).
    var canonical: (negative: Bool, digits: String, exponent: Int) {
        var text = Substring(literal)
        let negative = text.first == "-"
        if negative { text = text.dropFirst() }
        var mantissa = text
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits = ""
        if let dot = mantissa.firstIndex(of: ".") {
            let fraction = mantissa[mantissa.index(after: dot)...]
            exponent -= fraction.count
            digits = String(mantissa[..<dot]) + fraction
        } else {
            digits = String(mantissa)
        }
        let trimmedLeading = digits.drop { $0 == "0" }
        var significant = String(trimmedLeading)
        while significant.last == "0" {
            significant.removeLast()
            exponent += 1
        }
        if significant.isEmpty { return (false, "", 0) }
        return (negative, significant, exponent)
    }
}
