import KVOValues

/// Which encoding of a change's event an observation reads: its `new` and
/// `old` option bits (0 to 3), plus 4 for the compact form. Eight in all, so
/// a node keeps the ones its observations read as one byte
/// (``EncodingVariants``), and a change encodes each of them once.
enum EncodingVariant {
    // Literals, so the hot path reads constants (EncodingVariantTests checks them against `of`).
    /// The usual event: `new` only, full.
    static let newFull = 1
    /// `new` only, compact.
    static let newCompact = 5

    @inline(__always)
    static func of(options: ObservationOptions, compact: Bool) -> Int {
        Int(options.rawValue & 0x3) | (compact ? 4 : 0)
    }

    /// The `new`/`old` options a variant's events carry.
    @inline(__always)
    static func options(of variant: Int) -> ObservationOptions { ObservationOptions(rawValue: UInt8(variant & 0x3)) }

    @inline(__always)
    static func isCompact(_ variant: Int) -> Bool { variant >= 4 }
}

/// A set of ``EncodingVariant``s, one bit each: what a node's observations
/// read, or what one change must encode.
struct EncodingVariants: Equatable {
    var rawValue: UInt8

    static let none = EncodingVariants(rawValue: 0)
    /// The usual event's variants, full and compact: encoded from the change's value in place.
    static let newOnly = EncodingVariants(rawValue: 1 << 1 | 1 << 5)

    @inline(__always) init(rawValue: UInt8) { self.rawValue = rawValue }
    @inline(__always) init(_ variant: Int) { rawValue = 1 << variant }

    @inline(__always) var isEmpty: Bool { rawValue == 0 }
    @inline(__always) func contains(_ variant: Int) -> Bool { rawValue & 1 << variant != 0 }
    @inline(__always) mutating func insert(_ variant: Int) { rawValue |= 1 << variant }
    @inline(__always) func isSubset(of other: EncodingVariants) -> Bool { rawValue & ~other.rawValue == 0 }
    /// Whether it holds exactly one variant.
    @inline(__always) var isSingle: Bool { rawValue != 0 && rawValue & (rawValue &- 1) == 0 }
    /// The lowest variant it holds (the only one when ``isSingle``).
    @inline(__always) var first: Int { rawValue.trailingZeroBitCount }
    @inline(__always) var containsCompact: Bool { rawValue >> 4 != 0 }
}
