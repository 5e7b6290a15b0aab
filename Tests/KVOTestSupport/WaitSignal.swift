import Foundation

/// What wakes ``waitUntil(_:timeout:recheckEvery:_:)`` when something a test
/// may be waiting for happens in this process: a ``Recorder`` got a value,
/// a process a helper started exited. Each notification wakes every wait on
/// such events alone (`recheckEvery: nil`), which checks its condition again;
/// waits that poll anyway are not woken, so that a busy recorder does not
/// make every other test's wait ask kvod again thousands of times a second.
///
/// @unchecked Sendable: `generation` and `sleepers` are only touched with
/// `condition`'s lock held.
public final class WaitSignal: @unchecked Sendable {
    /// The one signal of the test process.
    public static let shared = WaitSignal()

    /// Where the deadlines of async waits fire: a queue of its own, whose
    /// thread libdispatch always provides, unlike the global queues', which
    /// threads blocked elsewhere (a full socket's write) can use up.
    public static let timers = DispatchQueue(label: "KVOTestSupport.WaitSignal.timers")

    private let condition = NSCondition()
    /// How many notifications there were: a waiter that saw one value sleeps until it changes.
    private var counted: UInt64 = 0
    /// Async waiters, by number, until a notification or their deadline.
    private var sleepers: [Int: CheckedContinuation<Void, Never>] = [:]
    private var lastSleeper = 0

    /// The count of notifications so far, read before checking a condition.
    public var generation: UInt64 { condition.withLock { counted } }

    /// Something happened: every waiter checks its condition again.
    public func notify() {
        let woken = condition.withLock {
            counted &+= 1
            condition.broadcast()
            defer { sleepers.removeAll() }
            return sleepers
        }
        for sleeper in woken.values { sleeper.resume() }
    }

    /// Blocks until a notification after `seen` (nil: notifications do not
    /// wake this wait), or until `deadline`.
    public func wait(after seen: UInt64?, until deadline: Date) {
        condition.withLock {
            while seen == nil || counted == seen, condition.wait(until: deadline) {}
        }
    }

    /// Suspends until a notification after `seen` (nil: notifications do not
    /// wake this wait), or until `deadline` (a timer the system fires, not a
    /// sleeping task).
    public func next(after seen: UInt64?, until deadline: Date) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let number: Int? = condition.withLock {
                if let seen, counted != seen { return nil }
                lastSleeper += 1
                if seen != nil { sleepers[lastSleeper] = continuation }
                return lastSleeper
            }
            guard let number else { return continuation.resume() }
            guard seen == nil else {
                Self.timers.asyncAfter(deadline: .now() + max(0, deadline.timeIntervalSinceNow)) { [self] in
                    condition.withLock { sleepers.removeValue(forKey: number) }?.resume()
                }
                return
            }
            Self.timers.asyncAfter(deadline: .now() + max(0, deadline.timeIntervalSinceNow)) { continuation.resume() }
        }
    }
}
