/// A sequential specification of one object (one partition of a history):
/// what it may answer to each input from each state. The checker looks for an
/// order of the operations, within their real-time intervals, that this
/// specification accepts step by step.
public protocol LinearizabilityModel {
    associatedtype Input
    associatedtype Output
    /// What the object holds between operations. Hashable: the checker caches
    /// the states it has seen with the set of operations linearized so far.
    associatedtype State: Hashable

    var initialState: State { get }

    /// The states the object may be in after answering `output` to `input`
    /// in `state`: none when it could not have answered so. An unknown
    /// outcome (`output` nil) gives every world the operation may have left:
    /// applied, and not applied.
    func step(_ state: State, _ input: Input, _ output: Output?) -> [State]

    /// What `input` and `output` were, for a report: `set a = c1-4 -> ok seq 40`.
    func describe(_ input: Input, _ output: Output?) -> String

    /// What `state` holds, for a report.
    func describe(_ state: State) -> String

    /// What an operation leaves that later ones may observe (a value written,
    /// a modSeq), so that a minimal history keeps the write a read saw: taking
    /// it away would make the read impossible for another reason than the
    /// one that was found.
    func produces(_ input: Input, _ output: Output?) -> [AnyHashable]

    /// What an operation observed that another one must have left.
    func consumes(_ input: Input, _ output: Output?) -> [AnyHashable]

    /// The state every order of `operations` the model accepts from `state`
    /// ends in, when the answers alone tell it; nil when only a search can
    /// (``SegmentedChecker`` then searches for every end state).
    func endState(of operations: [HistoryOperation<Input, Output>], from state: State) -> State?

    /// Whether no state reachable from `state` accepts `output` to `input`:
    /// the checker then gives up the order it tries at once. True only when
    /// certain (false: the checker goes on as without it).
    func neverFits(_ state: State, _ input: Input, _ output: Output?) -> Bool
}

extension LinearizabilityModel {
    public func produces(_ input: Input, _ output: Output?) -> [AnyHashable] { [] }
    public func consumes(_ input: Input, _ output: Output?) -> [AnyHashable] { [] }
    public func endState(of operations: [HistoryOperation<Input, Output>], from state: State) -> State? { nil }
    public func neverFits(_ state: State, _ input: Input, _ output: Output?) -> Bool { false }
}
