/// The longest `throttle` an observation may ask for (`observe`'s `throttle`,
/// docs/PROTOCOL.md): one number for kvod, which refuses a longer one, and its
/// clients, which can say so before asking.
public enum ThrottleLimit {
    /// One hour, in milliseconds.
    public static let milliseconds: UInt32 = 3_600_000
}
