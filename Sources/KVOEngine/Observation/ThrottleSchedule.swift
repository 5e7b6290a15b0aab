#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import HeapModule

/// When each throttled observation's interval ends (`throttle` in
/// `observe`), across all clients. The engine has no timer: the daemon asks
/// for ``nextDeadline`` and says when it is reached
/// (``Engine/releaseThrottledEvents(at:)``).
///
/// Each open interval has one entry; entries of intervals that were since
/// dropped (their observation ended) are skipped when they come due, and
/// swept out once they outnumber the open intervals, so that a client that
/// observes and unobserves with a long throttle cannot pile them up.
final class ThrottleSchedule {
    struct Entry: Comparable {
        /// Milliseconds on ``clock``.
        let time: UInt64
        /// Kept so that its client can be reached while it observes; an
        /// unobserved info's entry is skipped.
        let info: ObservationInfo
        /// The object of a prefix observation's interval; "" for the others.
        let object: String

        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.time < rhs.time }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.time == rhs.time && lhs.info === rhs.info }
    }

    @exclusivity(unchecked) private(set) var entries = Heap<Entry>()
    /// How many intervals are open, across all clients.
    @exclusivity(unchecked) var openIntervals = 0
    /// Milliseconds on a monotonic clock; tests set their own.
    var clock: @Sendable () -> UInt64 = monotonicMilliseconds

    var nextDeadline: UInt64? { entries.min?.time }

    /// What the intervals keep, for the memory account: each open one's
    /// window in its client's table (its object's name is shared with the
    /// store's) and each entry of the heap, dead ones included.
    var bytes: Int { openIntervals * 128 + entries.count * MemoryLayout<Entry>.stride }

    func add(_ entry: Entry) {
        entries.insert(entry)
        if entries.count > 2 * openIntervals + 64 { sweep() }
    }

    /// Keeps only the entries of intervals still open: a pass over the heap,
    /// made when at least half of it is dead, so its cost is shared by the
    /// entries that made it.
    private func sweep() {
        entries = Heap(entries.unordered.filter { entry in
            entry.info.state == .observing && entry.info.owner.isOpen(entry)
        })
    }

    /// Takes the next entry due at `now`, if any.
    func popDue(at now: UInt64) -> Entry? {
        guard let first = entries.min, first.time <= now else { return nil }
        return entries.removeMin()
    }
}

/// A monotonic clock in milliseconds: what throttle intervals are measured on.
public func monotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
}
