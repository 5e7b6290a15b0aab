@testable import KVOEngine

/// Counts only the tests read, of what the engine holds.
extension Engine {
    /// How many writers wait for their reply now (`await`).
    var awaitingWriters: Int { shared.awaitSchedule.waits.count }

    /// This kvod's changes with `await` not decided yet, by token (``PendingProposals``).
    var awaitedProposals: [UInt64: AwaitedProposal] { proposals.awaited }

    /// How many leased values there are.
    var leaseCount: Int { leaseTable.count }
}
