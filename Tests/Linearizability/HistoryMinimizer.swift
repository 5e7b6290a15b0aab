/// Cuts a history that is not linearizable down to a small part that still
/// is not, for a report a person can read: first to the operations called
/// before the stuck operation's answer, then chunks of operations left out
/// while the rest still fails (halves, quarters, … single operations).
///
/// An operation is left out only if nothing that stays observed what it left
/// (``LinearizabilityModel/produces(_:_:)``): without the write a read saw,
/// the read would fail for another reason than the one found.
public struct HistoryMinimizer<Model: LinearizabilityModel> {
    public let checker: LinearizabilityChecker<Model>

    /// `checker`'s bounds apply to each try: a try that runs out counts as
    /// linearizable (the operations it left out stay).
    public init(checker: LinearizabilityChecker<Model>) { self.checker = checker }

    /// The indices, ascending, of a part of `history` that is not
    /// linearizable and from which no operation can be left out (within
    /// `seconds`: past them, the part found so far). A segment of a history
    /// (``SegmentedChecker``) is searched from the states it may start in, `starts`.
    public func minimize(_ history: [HistoryOperation<Model.Input, Model.Output>], stuck: Int?,
                         seconds: Double = 20, from starts: [Model.State]? = nil) -> [Int] {
        let starts = starts ?? [checker.model.initialState]
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        var kept = Array(history.indices)
        if let stuck {
            let prefix = kept.filter { history[$0].call <= history[stuck].returned }
            if prefix.count < kept.count, canLeaveOut(Set(kept).subtracting(prefix), keeping: prefix, history),
               fails(prefix, history, starts) {
                kept = prefix
            }
        }
        var chunk = max(1, kept.count / 2)
        while true {
            var start = 0
            var leftOut = false
            while start < kept.count {
                if clock.now > deadline { return kept }
                let end = min(kept.count, start + chunk)
                let rest = Array(kept[..<start] + kept[end...])
                if canLeaveOut(Set(kept[start..<end]), keeping: rest, history), fails(rest, history, starts) {
                    kept = rest
                    leftOut = true
                } else {
                    start = end
                }
            }
            // Single operations again until none goes: leaving out a read can free the write it saw.
            if chunk == 1 && !leftOut { return kept }
            chunk = max(1, chunk / 2)
        }
    }

    private func fails(_ indices: [Int], _ history: [HistoryOperation<Model.Input, Model.Output>],
                       _ starts: [Model.State]) -> Bool {
        checker.check(indices.map { history[$0] }, from: starts).verdict == .notLinearizable
    }

    private func canLeaveOut(_ left: Set<Int>, keeping rest: [Int],
                             _ history: [HistoryOperation<Model.Input, Model.Output>]) -> Bool {
        var produced = Set<AnyHashable>()
        for index in left { produced.formUnion(checker.model.produces(history[index].input, history[index].output)) }
        if produced.isEmpty { return true }
        return !rest.contains { index in
            checker.model.consumes(history[index].input, history[index].output).contains { produced.contains($0) }
        }
    }
}
