import Linearizability

/// Each object's history of a round, checked for linearizability with
/// ``KeyPathRegisterModel`` (one partition per object, batches touch one
/// object): writes in their real-time intervals and in the order of their
/// seqs, unknown outcomes as maybe applied, reads at the moment their seq
/// names (``RevisionTimeline``): after the object's last write up to it,
/// before its writes above it.
///
/// A write of unknown outcome is resolved by the observers' streams, as etcd's
/// robustness tests patch their histories from watch events: heard at seq S,
/// it was applied at S (at the latest before a write above S was answered);
/// never heard, it was not applied. The streams are checked on their own
/// (complete, the same on every kvod, each acknowledged write at its seq), and
/// without this every write of unknown outcome may fit anywhere after its call,
/// which made the search of a 3,400-operation history pass two million states.
/// Each object's history is searched segment by segment, cut where no
/// operation on the object is in flight (``SegmentedChecker``), from every
/// state the segment before may end in; the checker's bounds hold per segment.
/// A violation is reported with the smallest part of its segment that still
/// is one (``HistoryMinimizer``).
struct RegisterHistoryCheck {
    /// One object's state when the round began: each key path's value and modSeq.
    typealias Initial = [String: [String: (value: String, modSeq: Int)]]

    var violations: [String] = []
    /// Stale reads of a state older than the round's first, left out.
    var staleBeforeRound = 0
    /// Objects whose search gave up past its bound.
    var undecided: [String] = []
    var operations = 0
    var states = 0
    var steps = 0
    var seconds = 0.0
    /// The objects' quiescent points, the segments searched between them, and
    /// the most operations, states and seconds one segment took.
    var cuts = 0
    var segments = 0
    var largestSegment = 0
    var mostSegmentStates = 0
    var longestSegmentSeconds = 0.0
    /// Cuts not made (more end states than carried), the most states carried
    /// over a cut, and operations from an unresolved unknown outcome on (no cut among them).
    var joined = 0
    /// Cuts whose end state the model told (the others' were searched for).
    var told = 0
    var mostCarried = 0
    var afterUnknown = 0

    static let maxStates = 2_000_000
    /// Room for ``maxStates`` of a 5,000-operation history (each state keeps a bit per operation):
    /// with group commit a round makes that many on one object, and the checker's default
    /// 512 MiB stopped it undecided at 771,367 states.
    static let maxCacheBytes = 1_536 << 20

    /// Writes of unknown outcome the streams heard (applied), and did not (not applied).
    var resolvedApplied = 0
    var resolvedNotApplied = 0

    /// `heard`: the seq the streams heard each value at.
    init(_ records: [RecordedOperation], objects: [String], paths: [String], initial: Initial, start: Double,
         heard: [String: Int]) {
        let clock = ContinuousClock()
        let began = clock.now
        let timeline = RevisionTimeline(records)
        violations += timeline.orderViolations()
        var names: [String] = []
        var numbers: [String: Int] = [:]
        func number(_ value: String?) -> Int {
            let name = value ?? "(absent)"
            if let known = numbers[name] { return known }
            names.append(name)
            numbers[name] = names.count - 1
            return names.count - 1
        }
        _ = number(nil)
        // Each object's applied seqs, for the seqs a read's last write may have.
        var appliedSeqs: [String: [Int]] = [:]
        for record in records where !record.isRead {
            if case .applied(let seq) = record.outcome { appliedSeqs[record.object, default: []].append(seq) }
        }
        for object in appliedSeqs.keys { appliedSeqs[object]!.sort() }
        func after(_ object: String, _ seq: Int) -> ClosedRange<Int>? {
            let first = paths.compactMap { initial[object]?[$0]?.modSeq }.max() ?? 0
            let last = appliedSeqs[object]?.last { $0 <= seq } ?? first
            return max(first, last) <= seq ? max(first, last)...seq : nil
        }
        var partitions: [String: [(HistoryOperation<RegisterInput, RegisterOutput>, RecordedOperation)]] = [:]
        for original in records {
            let record = resolve(original, heard, timeline)
            // A stale read may reflect a state older than the round's first (a kvod restarted and cut off
            // while it replayed its start window): not this round's to check, and it says so.
            if record.outcome.isStale, let seq = record.seq, after(record.object, seq) == nil {
                staleBeforeRound += 1
                continue
            }
            guard let operation = Self.operation(record, paths, timeline, start, number, { after(record.object, $0) }) else {
                violations.append("\(record.request) through kvod \(record.kvod) was answered at seq \(record.seq ?? -1) at "
                    + "\(record.returned ?? -1), which no moment fits: a write at a seq up to it was sent after that, or one "
                    + "above it was answered before the writes below it were sent")
                continue
            }
            partitions[record.object, default: []].append((operation, original))
        }
        for object in objects {
            let history = partitions[object] ?? []
            operations += history.count
            let start = initial[object] ?? [:]
            let registers = ObjectRegisters(values: paths.map { number(start[$0]?.value) },
                                            modSeqs: paths.map { start[$0]?.modSeq ?? 0 },
                                            lastSeq: paths.compactMap { start[$0]?.modSeq }.max() ?? 0)
            let model = KeyPathRegisterModel(initial: registers, pathNames: paths, valueNames: names)
            let checker = SegmentedChecker(checker: LinearizabilityChecker(
                model: model, maxStates: Self.maxStates, maxSteps: 50 * Self.maxStates, maxCacheBytes: Self.maxCacheBytes))
            let result = checker.check(history.map(\.0))
            states += result.states
            steps += result.steps
            cuts += result.cuts
            segments += result.searched
            largestSegment = max(largestSegment, result.largestSegment)
            mostSegmentStates = max(mostSegmentStates, result.mostStates)
            longestSegmentSeconds = max(longestSegmentSeconds, result.longestSeconds)
            joined += result.joined
            told += result.told
            mostCarried = max(mostCarried, result.mostCarried)
            afterUnknown += result.afterUnknown
            switch result.verdict {
            case .linearizable: break
            case .unknown:
                undecided.append("\(object): \(history.count) operations, a segment of \(result.segment.count) gave up after "
                    + "\(result.mostStates) states")
            case .notLinearizable:
                violations.append(Self.report(object, history, result, model))
            }
        }
        seconds = (clock.now - began) / .seconds(1)
    }

    /// `record`, or, for a write of unknown outcome, the outcome the streams tell.
    private mutating func resolve(_ record: RecordedOperation, _ heard: [String: Int],
                                  _ timeline: RevisionTimeline) -> RecordedOperation {
        guard case .write(_, let writes, _) = record.request, case .unknown = record.outcome else { return record }
        let seqs = Set(writes.map { heard[$0.value] })
        guard seqs.count == 1, let seq = seqs.first else { return record }  // a batch heard in part: the streams' check says so
        guard let seq else {
            resolvedNotApplied += 1
            return record.resolved(.notApplied, returned: record.call)
        }
        resolvedApplied += 1
        return record.resolved(.applied(seq: seq), returned: max(record.call, timeline.madeBefore(seq)))
    }

    private static func operation(_ record: RecordedOperation, _ paths: [String], _ timeline: RevisionTimeline,
                                  _ start: Double, _ number: (String?) -> Int, _ after: (Int) -> ClosedRange<Int>?)
        -> HistoryOperation<RegisterInput, RegisterOutput>?
    {
        func path(_ name: String) -> Int { paths.firstIndex(of: name)! }
        switch (record.request, record.outcome) {
        case (.write(_, let writes, _), let outcome):
            let input = RegisterInput.write(writes.map { write in
                let condition: RegisterCondition? = switch write.condition {
                case .modSeq(let modSeq)?: .modSeq(modSeq)
                case .value(let value)?: .value(number(value))
                case nil: nil
                }
                return RegisterWrite(path: path(write.path), value: number(write.value), condition: condition)
            })
            let output: RegisterOutput? = switch outcome {
            case .applied(let seq): .applied(seq: seq)
            case .conditionFailed: .conditionFailed
            case .notApplied: .notApplied
            default: nil
            }
            guard let output, let returned = record.returned else {
                return HistoryOperation(client: record.client, input: input, call: record.call)
            }
            return HistoryOperation(client: record.client, input: input, call: record.call, output: output, returned: returned)
        case (.get(_, let name), .value(let value, let modSeq, let seq, _)):
            guard let (from, to) = timeline.interval(ofReadAt: seq, answered: record.returned!, notBefore: start),
                  let after = after(seq) else { return nil }
            return HistoryOperation(client: record.client, input: .read(path: path(name)), call: from,
                                    output: .value(number(value), modSeq: value == nil ? nil : modSeq, after: after), returned: to)
        case (.getAll, .values(let values, let seq, _)):
            guard let (from, to) = timeline.interval(ofReadAt: seq, answered: record.returned!, notBefore: start),
                  let after = after(seq) else { return nil }
            return HistoryOperation(client: record.client, input: .readAll, call: from,
                                    output: .values(paths.map { number(values[$0]) }, after: after), returned: to)
        default:
            return nil
        }
    }

    /// The violation as a person reads it: the smallest part found, each
    /// operation with its interval (reads: where their seq puts them, and when they were sent and answered).
    /// The part is cut from the segment the search failed in, searched from the states it may start in.
    private static func report(_ object: String, _ history: [(HistoryOperation<RegisterInput, RegisterOutput>, RecordedOperation)],
                               _ result: SegmentedResult<ObjectRegisters>, _ model: KeyPathRegisterModel) -> String {
        let operations = history.map(\.0)
        let bounded = LinearizabilityChecker(model: model, maxStates: 200_000, maxSteps: 2_000_000)
        let segment = result.segment
        let stuck = result.stuckOperation.flatMap { segment.firstIndex(of: $0) }
        let part = HistoryMinimizer(checker: bounded)
            .minimize(segment.map { operations[$0] }, stuck: stuck, seconds: 30, from: result.startStates)
            .map { segment[$0] }
        let origin = part.map { min(operations[$0].call, history[$0].1.call) }.min() ?? 0
        var lines = HistoryReport.lines(part, of: operations, model: model, origin: origin)
        for index in part.sorted() {
            let record = history[index].1
            if case .unknown(let why) = record.outcome {
                lines.append("#\(index) had no answer (\(why)): the streams tell its outcome")
            }
            guard record.isRead else { continue }
            lines.append("#\(index) was sent at \(HistoryReport.milliseconds(record.call - origin)) through kvod "
                + "\(record.kvod), answered at \(HistoryReport.milliseconds(record.returned! - origin)), seq \(record.seq!)"
                + (record.outcome.isStale ? ", stale" : ""))
        }
        let starts = result.startStates.map { model.describe($0) }.joined(separator: " or ")
        return "\(object) is not linearizable (\(operations.count) operations; the search got stuck at #"
            + "\(result.stuckOperation ?? -1), in a segment of \(segment.count) starting from \(starts)); the smallest part "
            + "that still is not, times in ms:\n  " + lines.joined(separator: "\n  ")
    }
}
