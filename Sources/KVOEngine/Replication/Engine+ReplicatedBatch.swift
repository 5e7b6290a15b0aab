import KVOProtocol
import KVOValues

/// `batch` over a replicated store (etcd, docs/CLUSTER.md): the whole batch is
/// one proposal, decided as one transaction at one revision. It is tried on a
/// scratch copy of the documents it touches, exactly as in local mode
/// (conditions, paths, `--max-memory`); the transaction is guarded by the
/// revision of every document the trial read, so the conditions held at the
/// revision it commits at. Every kvod replays its ops in order.
extension Engine {
    /// Proposes `operations` (the batch `request` carries) through
    /// `replicator`; the reply comes once the batch is applied here (with
    /// `await`, once its observers here are settled). A lost race is computed
    /// again, as a single change's.
    func proposeBatch(_ operations: [ChangeOperation], of request: Request, from client: ClientController,
                      through replicator: ChangeReplicator, attempt: Int) throws(KVOEngineError) {
        var (proposal, changed, sums) = try batchProposal(operations)
        proposal.context.uid = client.credentials?.uid
        if proposal.changes.contains(where: { $0.steps.contains { $0.change.context.lifetime?.ephemeral == true } }) {
            proposal.owner = client.id
        }
        let store = store
        let applied = { (seq: UInt64) -> ReplyEncoder in
            // Every op of the batch has the revision's seq; nothing changed: the current seq.
            var reply = ReplyEncoder()
            reply.seq(changed.contains(true) ? seq : store.seq)
            let number = JSONValue.number(JSONNumber(validatedLiteral: String(seq)))
            reply.field(.seqs, .array(changed.map { $0 ? number : .null }))
            reply.sums(sums)
            return reply
        }
        proposal.context.awaitID = beginProposal(of: request, from: client, reply: applied)
        replicator.propose(proposal) { [self] outcome in
            answerReplicated(outcome, to: request, from: client, through: replicator, attempt: attempt,
                             contended: "the objects of this batch", awaitID: proposal.context.awaitID,
                             applied: applied)
        }
    }

    /// What `operations` would do to the replica now, as one proposal,
    /// whether each op changes something, and each add's sum (the store
    /// commits these documents or none); throws what local mode would.
    func batchProposal(_ operations: [ChangeOperation]) throws(KVOEngineError)
        -> (proposal: BatchProposal, changed: [Bool], sums: [Int?]) {
        let log = ChangeCollector()
        let (trial, seqs) = try self.trial(operations, log: log)
        var objects: [String] = []
        var mentioned: Set<String> = []
        for change in operations {
            guard let (object, _) = Self.target(of: change.operation), mentioned.insert(object).inserted else { continue }
            objects.append(object)
        }
        let records = Dictionary(log.changes.map { ($0.seq, $0) }, uniquingKeysWith: { $1 })
        var steps: [String: [ReplicatedBatchStep]] = [:]
        for (position, seq) in seqs.enumerated() {
            guard let seq, let record = records[seq] else { continue }
            var change = replicated(record, op: operations[position].operation.op.rawValue)
            // A set's or add's lifetime (no other op has one), as a single set's record tells it: every
            // kvod then knows the value is leased.
            change.context.lifetime = operations[position].lifetime
            steps[record.object, default: []].append(ReplicatedBatchStep(change: change, position: position,
                                                                         written: record.new))
        }
        let changes = objects.compactMap { object -> BatchProposal.ObjectChange? in
            guard var own = steps[object] else { return nil }
            // The document after the batch tells what the last step wrote.
            own[own.count - 1].written = nil
            return BatchProposal.ObjectChange(object: object, document: trial.store.document(object), steps: own,
                                              modSeqs: trial.store.modSeqs(object).map {
                                                  ProposedModSeqs(tree: $0, base: store.seq)
                                              })
        }
        let sums = zip(operations, seqs).map { operation, seq -> Int? in
            guard case .add = operation.operation, let seq, case .number(let number)? = records[seq]?.new,
                  case .integer(let sum) = AddedInteger(number) else { return nil }
            return sum
        }
        return (BatchProposal(objects: objects, changes: changes), seqs.map { $0 != nil }, sums)
    }

    /// Applies a committed batch at `seq` (the store's revision), whoever
    /// proposed it: its steps in op order, each through
    /// ``applyReplicated(_:document:seq:)`` with its object's document right
    /// after it (`documents`' for an object's last step, else the replica's
    /// with the step replayed), so each op has its own events, as in local
    /// mode, and they are contiguous. `documents` holds the revision's
    /// documents (nil: deleted); one that no step names (written without
    /// kvod) is then applied as a whole-document change.
    public func applyReplicatedBatch(_ steps: [ReplicatedBatchStep], documents: [String: JSONObject?], seq: UInt64) {
        applyAwaited(steps.first?.change.context.awaitID, seq: seq) {
            let ordered = steps.sorted { $0.position < $1.position }
            var last: [String: Int] = [:]
            for (index, step) in ordered.enumerated() { last[step.change.object] = index }
            for (index, step) in ordered.enumerated() {
                let object = step.change.object
                if last[object] == index, let document = documents[object] {
                    applyReplicatedChange(step.change, document: document, seq: seq)
                    continue
                }
                var document = store.value(object, at: [])
                ChangeRecord(object: object, path: step.change.path, kind: step.change.kind, indexes: step.change.indexes,
                             old: nil, new: step.written, seq: seq, existingKeys: 0).apply(to: &document)
                let members: JSONObject? = if case .object(let members)? = document { members } else { nil }
                applyReplicatedChange(step.change, document: members, seq: seq)
            }
            // By name, not the dictionary's hash order, so that every kvod sends their events in one order.
            for object in documents.keys.filter({ last[$0] == nil }).sorted() {
                applyReplicatedChange(ReplicatedChange(op: "external", object: object, path: [], kind: .setting),
                                      document: documents[object] ?? nil, seq: seq)
            }
        }
    }
}

/// Keeps the changes a batch's trial makes, in order.
private final class ChangeCollector: ChangeLog {
    var changes: [ChangeRecord] = []

    func record(_ change: ChangeRecord) { changes.append(change) }
}
