/// How much output may wait for one client before it counts as not keeping
/// up (Redis's `client-output-buffer-limit`): over the hard limit at once, or
/// over the soft limit for longer than the soft period. What then happens to
/// its events is each observation's policy (docs/PROTOCOL.md, "Slow readers");
/// ``SlowReaderPolicy`` decides by these numbers.
///
/// The defaults leave room for bursts (a client that reads at all drains 4 MiB
/// in well under a second) and cap a stuck client at about 16 MiB of queued
/// output plus one held event per observation.
public struct OutputLimits: Sendable, Equatable {
    /// Bytes queued for the socket beyond which the client is congested at once.
    public var hardBytes = 16 << 20
    /// Bytes queued for the socket that may not last longer than `softMilliseconds`.
    public var softBytes = 4 << 20
    /// How long queued output may stay over `softBytes`.
    public var softMilliseconds: UInt64 = 10_000

    public init(hardBytes: Int = 16 << 20, softBytes: Int = 4 << 20, softMilliseconds: UInt64 = 10_000) {
        self.hardBytes = hardBytes
        self.softBytes = softBytes
        self.softMilliseconds = softMilliseconds
    }

    /// Reads a size such as `1048576`, `512k`, `16m` or `1g` (powers of 1024).
    public static func parseSize(_ text: String) -> Int? {
        let lowered = text.lowercased()
        let multipliers: [(String, Int)] = [("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30)]
        for (suffix, multiplier) in multipliers where lowered.hasSuffix(suffix) {
            guard let number = Int(lowered.dropLast()), number >= 0 else { return nil }
            let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
            return overflow ? nil : bytes
        }
        return Int(lowered).flatMap { $0 >= 0 ? $0 : nil }
    }
}
