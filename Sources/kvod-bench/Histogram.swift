/// A log-linear latency histogram in the manner of HdrHistogram: values up
/// to 127 ns are exact, larger ones fall into buckets 1/64 of a power of two
/// wide, so every percentile is within 1.6 % of the true value, and
/// recording is a few instructions with no allocation.
final class Histogram {
    private static let subBuckets = 64
    private var counts = [UInt64](repeating: 0, count: 128 + 57 * 64)
    private(set) var total: UInt64 = 0
    private(set) var maximum: UInt64 = 0

    @inline(__always)
    func record(_ value: UInt64) {
        counts[Self.bucket(of: value)] &+= 1
        total &+= 1
        if value > maximum { maximum = value }
    }

    /// The value below which `fraction` of the recorded values lie (the
    /// bucket's midpoint), or 0 when nothing was recorded.
    func percentile(_ fraction: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= max(rank, 1) { return min(Self.midpoint(of: index), maximum) }
        }
        return maximum
    }

    @inline(__always)
    static func bucket(of value: UInt64) -> Int {
        if value < 128 { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount  // ≥ 7
        let mantissa = Int(truncatingIfNeeded: value >> UInt64(exponent - 6)) & (subBuckets - 1)
        return 128 + (exponent - 7) * subBuckets + mantissa
    }

    static func midpoint(of bucket: Int) -> UInt64 {
        if bucket < 128 { return UInt64(bucket) }
        let exponent = (bucket - 128) / subBuckets + 7
        let mantissa = UInt64((bucket - 128) % subBuckets)
        let low = (64 + mantissa) << UInt64(exponent - 6)
        return low + (UInt64(1) << UInt64(exponent - 6)) / 2
    }
}
