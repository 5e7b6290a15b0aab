import KVOEngine
import KVOProtocol

/// Names what made a loop turn slow: a turn that worked more than
/// ``thresholdMicroseconds`` of the loop's CPU is logged with the longest
/// request it handled (op, client, time), so the operator, and a soak run,
/// can tell a request that needs bounding from work outside requests (output
/// flushes, storage completions, slices, heap trims, timers), whose longest
/// piece the line names too. At most ``linesPerMinute`` lines a minute, so a
/// burst's first turns are all named; the next line after a silence says how
/// many went unlogged. Loop-confined.
struct SlowTurnLog {
    /// Issue 33's bound on one turn's work.
    static let defaultThresholdMicroseconds: UInt64 = 50_000
    let thresholdMicroseconds: UInt64
    private var longest: (opIndex: Int, nanoseconds: UInt64, client: Int)?
    /// The longest piece of work outside requests this turn (``noteWork(_:nanoseconds:)``).
    private var longestWork: (name: StaticString, nanoseconds: UInt64)?
    /// Lines logged in the current minute, from when it began (loop ms).
    private var window: (start: UInt64, lines: Int) = (0, 0)
    private var unlogged = 0
    static let linesPerMinute = 10

    init(thresholdMicroseconds: UInt64 = Self.defaultThresholdMicroseconds) {
        self.thresholdMicroseconds = thresholdMicroseconds
    }

    /// Notes one request handled in this turn.
    mutating func noteRequest(opIndex: Int, nanoseconds: UInt64, client: Int) {
        if nanoseconds > longest?.nanoseconds ?? 0 { longest = (opIndex, nanoseconds, client) }
    }

    /// Notes work done outside a request in this turn: `name` says what
    /// (a flush of output, a slice of long work, a heap trim, a timer's).
    mutating func noteWork(_ name: StaticString, nanoseconds: UInt64) {
        if nanoseconds > longestWork?.nanoseconds ?? 0 { longestWork = (name, nanoseconds) }
    }

    /// Ends the turn that worked `cpuMicroseconds` (`wallMicroseconds` on the
    /// clock) at loop time `now` (ms): the line to log, or nil.
    mutating func turnEnded(wallMicroseconds: UInt64, cpuMicroseconds: UInt64, now: UInt64) -> String? {
        defer {
            longest = nil
            longestWork = nil
        }
        guard cpuMicroseconds > thresholdMicroseconds else { return nil }
        if now &- window.start >= 60_000 { window = (now, 0) }
        guard window.lines < Self.linesPerMinute else {
            unlogged += 1
            return nil
        }
        window.lines += 1
        defer { unlogged = 0 }
        let request = longest.map {
            "its longest request: \(Op.allCases[$0.opIndex].rawValue) from client #\($0.client), "
                + "\(Self.milliseconds($0.nanoseconds / 1_000)) ms"
        } ?? "no request"
        let work = longestWork.map { "; its longest other work: \($0.name), \(Self.milliseconds($0.nanoseconds / 1_000)) ms" }
            ?? ""
        return "a loop turn worked \(Self.milliseconds(cpuMicroseconds)) ms of CPU "
            + "(\(Self.milliseconds(wallMicroseconds)) ms on the clock), over \(Self.milliseconds(thresholdMicroseconds)) ms; "
            + request + work + RefusalLog.suffix(unlogged: unlogged)
    }

    private static func milliseconds(_ microseconds: UInt64) -> String {
        let tenths = (microseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }
}
