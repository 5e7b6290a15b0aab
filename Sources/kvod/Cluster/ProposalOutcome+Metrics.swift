import KVOEngine

/// A proposal's outcome as `kvod_cluster_commit_duration_seconds` labels it.
extension ProposalOutcome {
    /// The labels, in ``metricIndex`` order.
    static let metricNames = ["applied", "conflict", "unavailable", "refused", "unknown"]

    /// The position of this outcome's label in ``metricNames``.
    var metricIndex: Int {
        switch self {
        case .applied: 0
        case .conflict: 1
        case .unavailable: 2
        case .refused: 3
        case .unknown: 4
        }
    }
}
