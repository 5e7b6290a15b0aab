import KVOValues

/// Where the engine records its changes so that they outlive the process.
///
/// The engine does no I/O: it calls ``record(_:)`` once per change, in seq
/// order, right after the store applied it, and before any reply or event
/// about it is appended to a client's output. What the log does with it, and
/// when the daemon lets those bytes leave, is the daemon's business (kvod
/// holds them until the change is durable; see docs/DURABILITY.md).
public protocol ChangeLog: AnyObject {
    /// A change the store has just applied.
    func record(_ change: ChangeRecord)
}

/// What a change log holds when kvod starts: every document, the last seq and
/// the most recent changes. ``Engine/restore(_:)`` continues from it.
public struct SavedState: Sendable {
    public let documents: [String: JSONObject]
    public let seq: UInt64
    /// Consecutive changes, oldest first, the newest being `seq`.
    public let history: [ChangeRecord]
    /// The epoch the seqs belong to (``Engine/epoch``).
    public let epoch: String
    /// The documents' modSeqs, by object; a document without one (a data
    /// directory written before modSeqs were kept) counts as changed at `seq`.
    public let modSeqs: [String: ModSeqTree]
    /// The leased values (ephemeral ones are deleted at start: their owners are gone).
    public let leases: [SavedLease]

    /// Why a saved state cannot be restored.
    public struct Inconsistency: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks that the history is consecutive and ends at `seq`, so that
    /// replays from it have no gap.
    public init(documents: [String: JSONObject], seq: UInt64, history: [ChangeRecord],
                epoch: String, modSeqs: [String: ModSeqTree] = [:], leases: [SavedLease] = []) throws(Inconsistency) {
        for (previous, next) in zip(history, history.dropFirst()) where next.seq != previous.seq + 1 {
            throw Inconsistency(description: "the change history jumps from seq \(previous.seq) to \(next.seq)")
        }
        if let last = history.last, last.seq != seq {
            throw Inconsistency(description: "the change history ends at seq \(last.seq), the store at \(seq)")
        }
        self.documents = documents
        self.seq = seq
        self.history = history
        self.epoch = epoch
        self.modSeqs = modSeqs
        self.leases = leases
    }
}
