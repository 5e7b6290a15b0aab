/// A history checked segment by segment (``QuiescentSegments``), each from
/// every state the segments before may have ended in: linearizable exactly
/// when the whole is (an order of the whole is one of each segment joined at
/// the cuts, and the state at a cut is one the part before may end in), but
/// the search never goes back past a cut, and its bounds hold per segment, with
/// a linearized set as small as the segment.
///
/// The states a segment may end in come from the model when its answers tell
/// them (``LinearizabilityModel/endState(of:from:)``: then one order that fits
/// is enough, as for the whole history); otherwise from a search for every
/// end state (``LinearizabilityChecker/endStates(_:from:)``), the whole set
/// carried over, so that a cut after two writes that may end either way keeps
/// both. Past ``maxCarriedStates`` states, the segment is not cut there but
/// joined to the next one.
public struct SegmentedChecker<Model: LinearizabilityModel> {
    public let checker: LinearizabilityChecker<Model>
    public var maxCarriedStates: Int

    public init(checker: LinearizabilityChecker<Model>, maxCarriedStates: Int = 64) {
        self.checker = checker
        self.maxCarriedStates = maxCarriedStates
    }

    public func check(_ history: [HistoryOperation<Model.Input, Model.Output>]) -> SegmentedResult<Model.State> {
        let segments = QuiescentSegments.split(history)
        var result = SegmentedResult<Model.State>(verdict: .linearizable, cuts: max(0, segments.count - 1))
        // Once an operation of unknown outcome is called, no later cut: the operations from it on.
        if let first = history.indices.filter({ history[$0].isUnknown }).min(by: { history[$0].call < history[$1].call }) {
            result.afterUnknown = history.filter { $0.call >= history[first].call }.count
        }
        var starts = [checker.model.initialState]
        var part: [Int] = []
        for (number, segment) in segments.enumerated() {
            part += segment
            let operations = part.map { history[$0] }
            let isLast = number == segments.count - 1
            let endsTold = isLast ? [] : starts.map { checker.model.endState(of: operations, from: $0) }
            let searched = if isLast {
                search(operations) { checker.check(operations, from: starts) }
            } else if !endsTold.contains(where: { $0 == nil }) {
                searchOnce(operations, starts, endsTold.map { $0! }, &result)
            } else {
                search(operations) { checker.endStates(operations, from: starts) }
            }
            result.add(operations: part.count, searched)
            let (found, ends) = (searched.found, searched.ends)
            guard found.verdict == .linearizable else {
                result.verdict = found.verdict
                result.segment = part
                result.startStates = starts
                result.stuckOperation = found.stuckOperation.map { part[$0] }
                result.longestLinearization = found.longestLinearization.map { part[$0] }
                return result
            }
            if isLast { break }
            if ends.count > maxCarriedStates {
                result.joined += 1
                continue
            }
            result.mostCarried = max(result.mostCarried, ends.count)
            starts = Array(ends)
            part = []
        }
        return result
    }

    /// One order that fits from each start, which then ends where the model said.
    private func searchOnce(_ operations: [HistoryOperation<Model.Input, Model.Output>], _ starts: [Model.State],
                            _ told: [Model.State], _ result: inout SegmentedResult<Model.State>)
        -> (found: LinearizabilityResult, ends: Set<Model.State>, seconds: Double)
    {
        result.told += 1
        var ends = Set<Model.State>()
        var last: (found: LinearizabilityResult, ends: Set<Model.State>, seconds: Double)?
        for (start, end) in zip(starts, told) {
            let one = search(operations) { (checker.check(operations, from: [start]), []) }
            if one.found.verdict == .unknown { return one }
            if one.found.verdict == .linearizable { ends.insert(end) }
            last = (LinearizabilityResult(verdict: ends.isEmpty ? .notLinearizable : .linearizable,
                                          states: (last?.found.states ?? 0) + one.found.states,
                                          steps: (last?.found.steps ?? 0) + one.found.steps,
                                          longestLinearization: one.found.longestLinearization,
                                          stuckOperation: ends.isEmpty ? one.found.stuckOperation : nil),
                    ends, (last?.seconds ?? 0) + one.seconds)
        }
        return last!
    }

    private func search(_ operations: [HistoryOperation<Model.Input, Model.Output>],
                        _ body: () -> (LinearizabilityResult, Set<Model.State>))
        -> (found: LinearizabilityResult, ends: Set<Model.State>, seconds: Double)
    {
        let clock = ContinuousClock()
        let began = clock.now
        let (found, ends) = body()
        return (found, ends, (clock.now - began) / .seconds(1))
    }

    private func search(_ operations: [HistoryOperation<Model.Input, Model.Output>],
                        _ body: () -> LinearizabilityResult)
        -> (found: LinearizabilityResult, ends: Set<Model.State>, seconds: Double)
    {
        search(operations) { (body(), []) }
    }
}

/// What ``SegmentedChecker`` found, and what its search took segment by segment.
public struct SegmentedResult<State: Hashable> {
    public var verdict: LinearizabilityResult.Verdict
    /// The history's quiescent points.
    public var cuts: Int
    /// Cuts not made: the states a segment may end in were more than could be carried.
    public var joined = 0
    /// Cuts whose end states the model told (the rest were searched for).
    public var told = 0
    /// Operations from the first of unknown outcome on: no cut among them.
    public var afterUnknown = 0
    /// The most states carried over a cut.
    public var mostCarried = 1
    /// The segments searched, and what the search took: in all, and at most in one.
    public var searched = 0
    public var states = 0
    public var steps = 0
    public var seconds = 0.0
    public var largestSegment = 0
    public var mostStates = 0
    public var longestSeconds = 0.0
    /// For a violation or a search past its bound: the segment's operations
    /// (indices into the history, by call) and the states it was searched from.
    public var segment: [Int] = []
    public var startStates: [State] = []
    /// For a violation, as ``LinearizabilityResult``'s, as indices into the history.
    public var stuckOperation: Int?
    public var longestLinearization: [Int] = []

    init(verdict: LinearizabilityResult.Verdict, cuts: Int) {
        self.verdict = verdict
        self.cuts = cuts
    }

    mutating func add(operations: Int, _ found: (found: LinearizabilityResult, ends: Set<State>, seconds: Double)) {
        searched += 1
        states += found.found.states
        steps += found.found.steps
        seconds += found.seconds
        let states = found.found.states, seconds = found.seconds
        largestSegment = max(largestSegment, operations)
        mostStates = max(mostStates, states)
        longestSeconds = max(longestSeconds, seconds)
    }
}
