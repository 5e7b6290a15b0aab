/// What the checker found for one history (one partition).
public struct LinearizabilityResult: Sendable {
    public enum Verdict: Sendable, Equatable {
        /// Some order of the operations, each within its interval, is one the model accepts.
        case linearizable
        /// No such order exists: the history is a violation.
        case notLinearizable
        /// The search gave up past its bound on work, before it could tell.
        case unknown
    }

    public let verdict: Verdict
    /// The distinct (linearized set, state) pairs the search visited: its memory.
    public let states: Int
    /// The model steps it tried: its time.
    public let steps: Int
    /// For a violation: the longest order the model accepted (indices into
    /// the history, in linearization order) ...
    public let longestLinearization: [Int]
    /// … and the operation whose answer came while it was still not
    /// linearized after that order: the one no order could fit in.
    public let stuckOperation: Int?
}
