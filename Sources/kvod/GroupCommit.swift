import KVOEngine
import KVOStorage

/// The loop's side of durability: collects the changes of one loop
/// iteration, hands them to the ``StorageWriter`` as one batch (group
/// commit), and knows which batch any output made now has to wait for.
/// Loop-confined.
///
/// A reply or event may leave only once the changes it reports are
/// committed. Output made while changes are uncommitted may report them (a
/// `get` of a value just set, an event), so it waits for the newest batch,
/// even the one still gathering. Output made when everything is committed
/// leaves at once.
final class GroupCommit: ChangeLog {
    private let store: Store
    private let writer: StorageWriter
    private var changes: [ChangeRecord] = []
    private var touched: [String] = []
    private var isTouched: Set<String> = []
    private var lastSubmitted: UInt64 = 0
    /// The fewest changes a batch is committed on the loop with. A group
    /// this large comes from pipelining clients, who wait for its replies
    /// whichever thread commits it; small groups (many clients, one request
    /// each) go to the writer thread, which commits while the loop serves
    /// the others (docs/PERFORMANCE.md).
    static let directCommitChanges = 64
    /// The last batch the writer committed, as the loop last read it.
    private(set) var committed: UInt64 = 0

    init(store: Store, writer: StorageWriter) {
        self.store = store
        self.writer = writer
    }

    func record(_ change: ChangeRecord) {
        changes.append(change)
        // Changes come in runs on one object: comparing with the last saves hashing its name.
        if touched.last != change.object, isTouched.insert(change.object).inserted { touched.append(change.object) }
    }

    /// The batch that output made now must wait for; nil when everything is committed.
    var batchToWaitFor: UInt64? {
        if !changes.isEmpty { return lastSubmitted + 1 }
        return lastSubmitted > committed ? lastSubmitted : nil
    }

    /// Submits this iteration's changes, if any, as one batch: committed
    /// here when there are at least ``directCommitChanges`` of them and the
    /// writer thread is idle (``StorageWriter/commitHere(_:)``), else
    /// handed to the writer thread.
    func submit() {
        guard !changes.isEmpty else { return }
        lastSubmitted += 1
        let documents = touched.map { (name: $0, document: store.document($0)) }
        var modSeqs: [String: ModSeqTree] = [:]
        for name in touched { modSeqs[name] = store.modSeqs(name) }
        let batch = CommitBatch(id: lastSubmitted, changes: changes, documents: documents, modSeqs: modSeqs)
        // A failed commit is neither committed nor queued: the writer's wake-up reports it.
        let direct = changes.count >= Self.directCommitChanges ? writer.commitHere(batch) : .declined
        if direct == .committed {
            committed = lastSubmitted
        } else if direct == .declined {
            writer.submit(batch)
        }
        changes.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
        isTouched.removeAll(keepingCapacity: true)
    }

    /// Batches not committed yet, the one still gathering included (`info`'s `storage.commitsInFlight`).
    var batchesInFlight: Int { Int(lastSubmitted &- committed) + (changes.isEmpty ? 0 : 1) }

    /// Reads how far the writer got (after it woke the loop).
    func refresh() -> StorageWriter.Progress {
        let progress = writer.progress
        committed = progress.committed
        return progress
    }
}
