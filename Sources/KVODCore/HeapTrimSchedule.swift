/// When kvod gives freed heap pages back to the kernel (`malloc_trim`):
/// after a flush pass that freed a lot of output buffer, at most once per
/// ``minimumInterval``, and, when a pass comes sooner than that, once the
/// interval is over.
///
/// Why the deferred trim: without it a burst freed within a second of the
/// last trim stayed resident until some later burst happened to trim, which
/// on an idle daemon is never (the measurement: docs/PERFORMANCE.md,
/// "Resident memory after a burst").
public struct HeapTrimSchedule: Sendable, Equatable {
    /// Freed output buffer capacity, in one flush pass, worth a trim.
    public static let threshold = 4 << 20
    /// A trim walks the whole heap (milliseconds for a large one): at most one this often.
    public static let minimumInterval: UInt64 = 1000

    /// What the daemon should do after a flush pass.
    public enum Action: Sendable, Equatable {
        case none
        case trimNow
        /// Arm a timer for this loop time (ms) and trim when it fires.
        case trimAt(UInt64)
    }

    private var lastTrim: UInt64?
    /// The loop time (ms) of the trim that waits for the interval, if one does.
    public private(set) var deferredUntil: UInt64?

    public init() {}

    /// A flush pass at loop time `now` (ms) freed `released` bytes of output buffers.
    public mutating func released(_ released: Int, now: UInt64) -> Action {
        guard released >= Self.threshold else { return .none }
        if let lastTrim, now &- lastTrim < Self.minimumInterval {
            if deferredUntil != nil { return .none }
            let due = lastTrim + Self.minimumInterval
            deferredUntil = due
            return .trimAt(due)
        }
        trimmed(now: now)
        return .trimNow
    }

    /// A trim was made at loop time `now` (at once, or when the deferred one came due).
    public mutating func trimmed(now: UInt64) {
        lastTrim = now
        deferredUntil = nil
    }
}
