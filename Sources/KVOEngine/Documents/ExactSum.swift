/// The exact sum of finite doubles, kept as one wide two's-complement integer
/// in units of 2⁻¹⁰⁷⁴ (the least subnormal), and rounded once when read.
///
/// A sum of doubles added one by one depends on the order it is taken in,
/// so a `@sum` kept from change to change (an element removed here, another
/// inserted there) would drift from one computed afresh. The exact sum does
/// not: adding and subtracting are exact, and its value is the double
/// nearest the true sum, whatever the order (a "superaccumulator").
struct ExactSum {
    /// 2098 bits reach the greatest double from the least; 64 more leave room
    /// for 2⁶³ terms; 36 limbs of 64 bits hold both. Little-endian limbs.
    private static let limbCount = 36
    /// Allocated by the first term that is not zero.
    private var limbs: [UInt64] = []

    /// The bytes its limbs take once allocated, with the array's header.
    var heldBytes: Int { limbs.isEmpty ? 0 : 32 + 8 * Self.limbCount }

    /// Adds (with `negative`, subtracts) `magnitude` × 2^`exponent`, `exponent` ≥ −1074.
    mutating func add(_ magnitude: UInt64, times2ToThe exponent: Int, negative: Bool) {
        guard magnitude != 0 else { return }
        if limbs.isEmpty { limbs = Array(repeating: 0, count: Self.limbCount) }
        let shift = exponent + 1074
        let offset = shift % 64
        // The term's two limbs, then the carry (or borrow) up to where it stops.
        var parts = (magnitude << offset, offset == 0 ? 0 : magnitude >> (64 - offset))
        var carry: UInt64 = 0
        var index = shift / 64
        while index < Self.limbCount {
            let part = parts.0
            parts = (parts.1, 0)
            guard part != 0 || carry != 0 || parts.0 != 0 else { break }
            let (first, overflow1) = negative ? limbs[index].subtractingReportingOverflow(part)
                : limbs[index].addingReportingOverflow(part)
            let (second, overflow2) = negative ? first.subtractingReportingOverflow(carry)
                : first.addingReportingOverflow(carry)
            limbs[index] = second
            carry = overflow1 || overflow2 ? 1 : 0
            index += 1
        }
    }

    /// Adds `value` (finite), or subtracts it.
    mutating func add(_ value: Double, subtracting: Bool = false) {
        let magnitude = value.significandBitPattern
            | (value.exponentBitPattern == 0 ? 0 : 1 << UInt64(Double.significandBitCount))
        // A subnormal's unit is 2⁻¹⁰⁷⁴; a normal's, 2^(its exponent − 1075).
        let exponent = max(Int(value.exponentBitPattern), 1) - 1075
        add(magnitude, times2ToThe: exponent, negative: (value.sign == .minus) != subtracting)
    }

    /// The double nearest the sum (ties to even); infinite when the sum is beyond every double.
    var value: Double {
        guard !limbs.isEmpty else { return 0 }
        var magnitude = limbs
        let negative = magnitude[Self.limbCount - 1] >> 63 == 1
        if negative {
            // Two's complement: invert and add one.
            var carry: UInt64 = 1
            for index in magnitude.indices {
                let (sum, overflow) = (~magnitude[index]).addingReportingOverflow(carry)
                magnitude[index] = sum
                carry = overflow ? 1 : 0
            }
        }
        guard let top = magnitude.lastIndex(where: { $0 != 0 }) else { return 0 }
        let highest = top * 64 + 63 - magnitude[top].leadingZeroBitCount
        let result: Double
        if highest < 64 {
            // At most 64 bits: one rounding, then an exact scaling (a
            // subnormal result has fewer than 53 bits, all kept).
            result = Double(sign: .plus, exponent: -1074, significand: Double(magnitude[0]))
        } else {
            // The 64 bits from the highest down, the lowest of them set when
            // anything below is: Double's one rounding of them is then the
            // rounding of the whole sum.
            let lowest = highest - 63
            let index = lowest / 64
            let offset = lowest % 64
            var bits = magnitude[index] >> offset
            if offset != 0 { bits |= magnitude[index + 1] << (64 - offset) }
            let below = offset == 0 ? 0 : magnitude[index] & ((1 << offset) - 1)
            if below != 0 || magnitude[..<index].contains(where: { $0 != 0 }) { bits |= 1 }
            result = Double(sign: .plus, exponent: lowest - 1074, significand: Double(bits))
        }
        return negative ? -result : result
    }
}
