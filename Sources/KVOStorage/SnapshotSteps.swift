import Foundation

/// The steps of a backup's copy (``SnapshotCopy``), timed: each holds the
/// database, so the longest is the longest a commit waited for the backup.
/// Logged by kvod when the copy is made.
public struct SnapshotSteps: Sendable, CustomStringConvertible {
    /// How many steps the copy took.
    public private(set) var count = 0
    /// The longest step, on the clock.
    public private(set) var longest: Duration = .zero
    /// The longest step in the writer thread's own CPU time (what a busy machine's other processes do not add to).
    public private(set) var longestCPU: Duration = .zero

    /// When a step starts: the clock and the thread's CPU time.
    static func now() -> (ContinuousClock.Instant, Duration) { (.now, threadCPUTime()) }

    mutating func record(since start: (ContinuousClock.Instant, Duration)) {
        count += 1
        longest = max(longest, .now - start.0)
        longestCPU = max(longestCPU, Self.threadCPUTime() - start.1)
    }

    private static func threadCPUTime() -> Duration {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return .zero }
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    public var description: String {
        let milliseconds = { (duration: Duration) in
            String(format: "%.2f", Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15)
        }
        return "\(count) steps, the longest \(milliseconds(longest)) ms (\(milliseconds(longestCPU)) ms of CPU)"
    }
}
