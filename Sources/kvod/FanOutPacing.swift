#if canImport(Glibc)
import Glibc
#endif

/// Spaces out the flushes of a loop that is fanning changes out: after a
/// flush pass that wrote to many more connections than it had requests to
/// answer, the loop pauses a moment before it polls again, so that the
/// changes arriving meanwhile leave in the same writes as each other.
///
/// Why: one change to many observers costs a `write` each, and a loop that
/// goes from one flush straight into the next sends a few changes per write
/// while the observers it woke compete with it for the CPUs. A short pause
/// lets changes gather, so fewer writes carry the same events (the
/// measurements: docs/PERFORMANCE.md, "Fan-out pacing").
///
/// Request/response traffic never pauses (one request, one reply: the ratio
/// is 1), nor does a flush to a few connections, nor one that answers many
/// requests at once: its writes already carry many events each, and a
/// client waiting for those replies would only be kept waiting. A lone
/// change to many observers is written at once; only what arrives during
/// the pause after it waits, at most the pause.
struct FanOutPacing {
    /// How long to pause; 0 turns pacing off (`--fanout-pause-microseconds`).
    let pauseMicroseconds: UInt32
    /// The shortest pause that helped p99 without costing p50 (docs/PERFORMANCE.md).
    static let defaultPauseMicroseconds: UInt32 = 20
    /// A flush pass counts as fan-out from this many connections written…
    static let minimumConnections = 16
    /// …when that is at least this many per request handled since the last pass.
    static let minimumWritesPerRequest = 4
    /// Requests (lines) handled since the last flush pass.
    private var requestsSinceFlush = 0

    init(pauseMicroseconds: UInt32) {
        self.pauseMicroseconds = pauseMicroseconds
    }

    /// A request line was handled.
    mutating func noteRequest() {
        requestsSinceFlush &+= 1
    }

    /// Whether a flush pass that wrote to `connections` connections was a
    /// fan-out worth pausing after; starts counting requests for the next pass.
    mutating func shouldPause(afterWritingTo connections: Int) -> Bool {
        defer { requestsSinceFlush = 0 }
        return pauseMicroseconds > 0 && connections >= Self.minimumConnections
            && connections >= Self.minimumWritesPerRequest * max(requestsSinceFlush, 1)
    }

    /// Blocks the loop's thread for the pause. The kernel's timer slack
    /// (50 µs for an ordinary thread) comes on top.
    func pause() {
        var duration = timespec(tv_sec: 0, tv_nsec: Int(pauseMicroseconds) * 1000)
        var remaining = timespec()
        while nanosleep(&duration, &remaining) == -1 && errno == EINTR { duration = remaining }
    }
}
