import KVOValues

/// What `add` makes of a JSON number (docs/PROTOCOL.md, "Counters"): it adds
/// integers only, written without fraction or exponent, and at most 2^53
/// either way, where every integer is still exact in a double (a JavaScript
/// or jq reader's). kvod keeps numbers as their text and does no
/// floating-point arithmetic: a sum is exact, or refused.
enum AddedInteger: Equatable {
    /// An integer within ±``limit``.
    case integer(Int)
    /// Written with a fraction or an exponent (`2.5`, `1.0`, `1e3`).
    case notAnInteger
    /// An integer past ±``limit``.
    case pastLimit

    /// 2^53.
    static let limit = 1 << 53

    init(_ number: JSONNumber) {
        let literal = number.literal
        let fractionOrExponent: Set<UInt8> = [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")]
        if literal.utf8.contains(where: fractionOrExponent.contains) {
            self = .notAnInteger
        } else if let value = Int(literal), (-Self.limit...Self.limit).contains(value) {
            self = .integer(value)
        } else {
            // A valid literal of digits alone that is no Int in range is larger.
            self = .pastLimit
        }
    }
}
