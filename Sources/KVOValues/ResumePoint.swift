/// Where an observer stopped: the seq of the last change it got, and the
/// epoch that seq belongs to (`observe`'s `since` and `epoch`).
public struct ResumePoint: Sendable, Hashable {
    public var seq: UInt64
    /// The history the seq was counted in (the engine's `epoch`); nil trusts the
    /// seq alone.
    public var epoch: String?

    public init(seq: UInt64, epoch: String? = nil) {
        self.seq = seq
        self.epoch = epoch
    }

    /// A fresh epoch: 16 random hex digits.
    public static func newEpoch() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
