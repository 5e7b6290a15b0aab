import KVOEngine
import KVOValues

/// The changes of one event-loop iteration, handed from the loop to the
/// storage writer and committed in one transaction (group commit).
public struct CommitBatch: Sendable {
    /// Numbers batches in the order they were made, from 1.
    public let id: UInt64
    /// Consecutive changes, oldest first.
    public let changes: [ChangeRecord]
    /// The objects those changes touched, as they are after them; nil when
    /// the object was deleted. A snapshot: the loop's store goes on changing.
    public let documents: [(name: String, document: JSONObject?)]
    /// Those documents' modSeqs, as they are after the changes (snapshots too).
    public let modSeqs: [String: ModSeqTree]

    public init(id: UInt64, changes: [ChangeRecord], documents: [(name: String, document: JSONObject?)],
                modSeqs: [String: ModSeqTree] = [:]) {
        self.id = id
        self.changes = changes
        self.documents = documents
        self.modSeqs = modSeqs
    }
}
