/// A linearizability checker on Porcupine's algorithm (anishathalye/porcupine,
/// the one etcd's robustness tests use): Wing & Gong's search over the orders
/// an operation may take among its concurrent ones, with Lowe's memoization
/// (a state reached with the same set of operations linearized is not
/// explored twice). Partitioning a history by key (P-compositionality) is
/// the caller's: each key's history is checked on its own.
///
/// The search walks the history's call and return entries in time order. At
/// a call it tries to linearize that operation next (the model accepts its
/// answer in the current state, and the resulting pair of linearized set and
/// state is new), lifts it out and starts again from the first entry; at a
/// return of an operation not linearized yet, no order from here works, so it
/// backtracks. An operation whose outcome is unknown returns at infinity and
/// its model step offers both worlds (applied, not applied), tried in turn.
///
/// Two prunings of its own. An operation the model says no later state will
/// accept (``LinearizabilityModel/neverFits(_:_:_:)``: a write at a seq below
/// the last one applied) ends the order being tried at once, as its answer
/// would, instead of after every operation called before that answer. And
/// an operation that leaves the state as it was (a
/// read, a failed condition) and fits where the search stands is never tried
/// anywhere later. Any order that fits it later fits it here too (it changes
/// nothing, and its interval holds this point), so when the search backtracks
/// over it, it backtracks further. Without this, reads concurrent with a write
/// (many, once stale reads are placed at their seq) made the search try every
/// subset of them.
public struct LinearizabilityChecker<Model: LinearizabilityModel> {
    public let model: Model
    /// Past this many distinct states the search stops and says `unknown`,
    /// rather than run for hours or take the machine's memory.
    public var maxStates: Int
    /// Past this many model steps likewise.
    public var maxSteps: Int
    /// Past this many bytes of cached states likewise (each holds a bit per operation).
    public var maxCacheBytes: Int

    public init(model: Model, maxStates: Int = 1_000_000, maxSteps: Int = 20_000_000, maxCacheBytes: Int = 512 << 20) {
        self.model = model
        self.maxStates = maxStates
        self.maxSteps = maxSteps
        self.maxCacheBytes = maxCacheBytes
    }

    private struct CacheKey: Hashable {
        let linearized: LinearizedSet
        let state: Model.State
    }

    /// One linearized operation on the search's stack: its call entry, the
    /// state before it, and the states its step offered that are not tried yet.
    private struct Frame {
        let entry: Int
        let before: Model.State
        let offered: [Model.State]
        let nextOffer: Int
        /// It left the state as it was: backtracking over it backtracks further.
        var isNeutral: Bool { offered.count == 1 && offered[0] == before }
    }

    /// Whether some order of `history` fits, from the model's initial state.
    public func check(_ history: [HistoryOperation<Model.Input, Model.Output>]) -> LinearizabilityResult {
        search(history, from: [model.initialState], collectingEndStates: false).result
    }

    /// Whether some order of `history` fits from one of `starts` (the states a
    /// previous segment of the history may have ended in).
    public func check(_ history: [HistoryOperation<Model.Input, Model.Output>], from starts: [Model.State])
        -> LinearizabilityResult
    {
        search(history, from: starts, collectingEndStates: false).result
    }

    /// As ``check(_:from:)``, and every state an order that fits may end in:
    /// what a history cut at a quiescent point carries to its next segment.
    /// Costs the whole search (each fitting order is a leaf to go past, not a
    /// place to stop), where ``check(_:from:)`` stops at the first that fits.
    public func endStates(_ history: [HistoryOperation<Model.Input, Model.Output>], from starts: [Model.State])
        -> (result: LinearizabilityResult, endStates: Set<Model.State>)
    {
        search(history, from: starts, collectingEndStates: true)
    }

    // Specialized for kvod's model here, where the search is compiled with -O: called
    // generically from another module, every copy of a frame went through witness tables.
    @_specialize(where Model == KeyPathRegisterModel)
    private func search(_ history: [HistoryOperation<Model.Input, Model.Output>], from starts: [Model.State],
                        collectingEndStates: Bool) -> (result: LinearizabilityResult, endStates: Set<Model.State>) {
        var list = EntryList(calls: history.map(\.call), returns: history.map(\.returned))
        var linearized = LinearizedSet(count: history.count)
        var state = model.initialState
        var cache = Set<CacheKey>()
        var frames: [Frame] = []
        var steps = 0
        var longest: [Int] = []
        var stuck: Int?
        var ends = Set<Model.State>()
        // A cached state's bytes: its linearized set, and about as much again for the set's own overhead.
        let maxStates = min(self.maxStates, maxCacheBytes / ((history.count + 63) / 64 * 8 + 64))

        /// Linearizes the operation of `entry` into the first of `offered`
        /// (from `start`) whose pair is new; false when none is.
        func push(_ entry: Int, _ offered: [Model.State], from start: Int, lifted: Bool) -> Bool {
            let operation = list.operation[entry]
            for index in offered.indices.dropFirst(start) {
                guard cache.insert(CacheKey(linearized: linearized.inserting(operation), state: offered[index])).inserted
                else { continue }
                frames.append(Frame(entry: entry, before: state, offered: offered, nextOffer: index + 1))
                state = offered[index]
                linearized.insert(operation)
                if !lifted { list.lift(entry) }
                return true
            }
            return false
        }

        // Each start is searched in turn, sharing the cache: pairs reached from two starts are explored once.
        for start in starts {
            state = start
            // A start already reached as a state with nothing linearized was searched from.
            guard cache.insert(CacheKey(linearized: linearized, state: start)).inserted else { continue }
            var entry = list.first
            while true {
                if cache.count > maxStates || steps > maxSteps {
                    return (LinearizabilityResult(verdict: .unknown, states: cache.count, steps: steps,
                                                  longestLinearization: longest, stuckOperation: stuck), ends)
                }
                if list.isEmpty {
                    // Every operation fits: done, or (collecting) one end state more, and on to the next order.
                    ends.insert(state)
                    if !collectingEndStates {
                        return (LinearizabilityResult(verdict: .linearizable, states: cache.count, steps: steps,
                                                      longestLinearization: [], stuckOperation: nil), ends)
                    }
                } else {
                    if list.isCall(entry) {
                        let operation = list.operation[entry]
                        steps += 1
                        let offered = model.step(state, history[operation].input, history[operation].output)
                        if push(entry, offered, from: 0, lifted: false) {
                            entry = list.first
                            continue
                        }
                        // An operation no state from here on accepts: as good as its answer reached.
                        guard offered.isEmpty, model.neverFits(state, history[operation].input, history[operation].output)
                        else {
                            entry = list.next[entry]
                            continue
                        }
                    }
                    // The answer of an operation not linearized yet: no order from here fits it in.
                    if frames.count > longest.count {
                        longest = frames.map { list.operation[$0.entry] }
                        stuck = list.operation[entry]
                    }
                }
                while let top = frames.last, top.isNeutral {
                    frames.removeLast()
                    linearized.remove(list.operation[top.entry])
                    list.unlift(top.entry)
                }
                guard let frame = frames.popLast() else {
                    if stuck == nil && !list.isEmpty { stuck = list.operation[entry] }
                    break
                }
                state = frame.before
                linearized.remove(list.operation[frame.entry])
                if push(frame.entry, frame.offered, from: frame.nextOffer, lifted: true) {
                    entry = list.first
                } else {
                    list.unlift(frame.entry)
                    entry = list.next[frame.entry]
                }
            }
        }
        let verdict: LinearizabilityResult.Verdict = ends.isEmpty ? .notLinearizable : .linearizable
        return (LinearizabilityResult(verdict: verdict, states: cache.count, steps: steps,
                                      longestLinearization: verdict == .linearizable ? [] : longest,
                                      stuckOperation: verdict == .linearizable ? nil : stuck), ends)
    }
}
