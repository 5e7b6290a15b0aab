import Foundation

/// What the history run did and found, round by round and in all: the
/// figures docs/RELIABILITY.md reports, and every violation.
struct ClusterHistorySummary {
    var rounds = 0
    var operations = 0
    /// Operations by what they were: `set`, `compare-and-set`, `get`, `get whole`, `batch`.
    var kinds: [String: Int] = [:]
    var unknown = 0
    var unknownApplied = 0
    var refused = 0
    var conditionFailed = 0
    var staleReads = 0
    var faults: [String: Int] = [:]
    var events = 0
    var resumes = 0
    /// Resumes a kvod refused while it was stale, still short of the seq resumed from.
    var refusedResumes = 0
    /// Stale reads of a state older than their round's first, not checked.
    var staleBeforeRound = 0
    var violations: [String] = []
    var undecided: [String] = []
    var checkerSeconds = 0.0
    var states = 0
    /// The most operations and states one segment of an object's history took.
    var largestSegment = 0
    var mostSegmentStates = 0
    var lines: [String] = []

    mutating func add(round: Int, records: [RecordedOperation], faults: [ClusterFaults.Record],
                      streams: [[StreamObserver.Event]], start: Double, register: RegisterHistoryCheck,
                      stream: ObserverStreamCheck, session: [String], unexpected: [String], resumes: [Int],
                      refusedResumes: [Int]) {
        rounds += 1
        operations += records.count
        var kinds: [String: Int] = [:]
        for record in records {
            kinds[Self.kind(record), default: 0] += 1
            switch record.outcome {
            case .unknown: unknown += 1
            case .notApplied: refused += 1
            case .conditionFailed: conditionFailed += 1
            case .value(_, _, _, true), .values(_, _, true): staleReads += 1
            default: break
            }
        }
        self.kinds.merge(kinds, uniquingKeysWith: +)
        unknownApplied += stream.unknownApplied
        for fault in faults { self.faults[fault.name, default: 0] += 1 }
        events += stream.events
        self.resumes = resumes.reduce(0, +)
        self.refusedResumes = refusedResumes.reduce(0, +)
        staleBeforeRound += register.staleBeforeRound
        let found = register.violations + stream.violations + session + unexpected
        violations += found.map { "round \(round): \($0)" }
        undecided += register.undecided.map { "round \(round): \($0)" }
        checkerSeconds += register.seconds
        states += register.states
        largestSegment = max(largestSegment, register.largestSegment)
        mostSegmentStates = max(mostSegmentStates, register.mostSegmentStates)
        let seconds = String(format: "%.1f", MonotonicClock.now() - start)
        lines.append("cluster history round \(round): \(records.count) operations in \(seconds) s ("
            + kinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            + "), \(stream.unknownApplied + stream.unknownNotApplied) of unknown outcome (\(stream.unknownApplied) applied), "
            + "\(faults.count) faults (" + faults.map { "\($0.name) " + String(format: "%.1f s", $0.end - $0.start) }
                .joined(separator: "; ")
            + "), \(streams.count) streams of \(stream.events) events; \(found.count) violations; checker "
            + String(format: "%.2f s, %d states", register.seconds, register.states)
            + " in \(register.segments) segments (\(register.cuts) quiescent points, \(register.told) end states told by the "
            + "model, \(register.joined) not cut, at most "
            + "\(register.mostCarried) states carried, \(register.afterUnknown) operations after an unresolved unknown "
            + "outcome); the largest segment \(register.largestSegment) operations, at most \(register.mostSegmentStates) states, "
            + String(format: "%.3f s", register.longestSegmentSeconds) + ", a segment")
    }

    private static func kind(_ record: RecordedOperation) -> String {
        switch record.request {
        case .write(_, _, true): "batch"
        case .write(_, let writes, _) where writes[0].condition != nil: "compare-and-set"
        case .write: "set"
        case .get: "get"
        case .getAll: "get whole"
        }
    }

    /// The whole run in a line (each round's is in ``lines``).
    var text: String {
        ([
            "cluster history: \(rounds) rounds, \(operations) operations checked ("
                + kinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                + "); \(unknown) of unknown outcome (\(unknownApplied) applied), \(refused) refused with nothing changed, "
                + "\(conditionFailed) conditions failed, \(staleReads) stale reads (\(staleBeforeRound) of a state before "
                + "their round, not checked); faults: "
                + faults.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
                + "; \(events) events per observer, \(resumes) resumes (\(refusedResumes) refused while stale and behind); "
                + "\(violations.count) violations, "
                + "\(undecided.count) undecided; checker " + String(format: "%.2f s, %d states", checkerSeconds, states)
                + "; the largest segment \(largestSegment) operations, at most \(mostSegmentStates) states",
        ]).joined(separator: "\n")
    }
}
