import KVOProtocol
import KVOValues

/// Change ops over a replicated store (etcd, docs/CLUSTER.md): the engine
/// decides nothing itself. A change is computed against the local replica
/// (every check of local mode, nothing applied), proposed to the
/// ``ChangeReplicator``, and applied only when the store's change stream
/// delivers it, at the store's revision, through the same commit path as a
/// local change: every kvod derives the same events for its observers.
extension Engine {
    /// How many times a change is computed again after losing its object to
    /// another writer before the client gets `unavailable`.
    public static let maxProposalAttempts = 32

    /// Answers a change op through `replicator`: the reply comes once the
    /// change is applied here (read-your-writes), and with `await` once its
    /// observers here were written to or acknowledged (``applyAwaited(_:seq:_:)``);
    /// meanwhile nothing more is read from the client (``ClientController/isAwaiting``).
    func handleReplicated(_ request: Request, from client: ClientController, through replicator: ChangeReplicator,
                          attempt: Int = 1) {
        do throws(KVOEngineError) {
            try authorize(request.operation, condition: request.condition, for: client)
            if case .batch(let operations) = request.operation {
                return try proposeBatch(operations, of: request, from: client, through: replicator, attempt: attempt)
            }
            if let condition = request.condition { try check(condition, of: request.operation) }
            let proposed = try proposal(for: request.operation).map { withContext($0, of: request, from: client) }
            // An add's sum is the proposal's: the store commits that document or none.
            let sum = proposed.flatMap { Self.sum(in: $0, of: request.operation) }
            let applied = { (seq: UInt64) in ReplyEncoder(seq: seq, sum: sum) }
            guard var proposal = proposed else {
                // Deleting what is not there: as in local mode, no change and the current seq (no observer is due).
                if let awaiting = request.awaiting {
                    return startWait(id: request.id, awaiting, of: client, reply: applied(store.seq), seq: store.seq,
                                     for: AwaitCollector(writer: client, condition: awaiting.condition))
                }
                return client.append(applied(store.seq), id: request.id)
            }
            proposal.change.context.awaitID = beginProposal(of: request, from: client, reply: applied)
            replicator.propose(proposal) { [self] outcome in
                answerReplicated(outcome, to: request, from: client, through: replicator, attempt: attempt,
                                 contended: proposal.change.object, awaitID: proposal.change.context.awaitID,
                                 applied: applied)
            }
        } catch {
            client.append(reply: ReplyEncoder.failure(id: request.id, concealing(error, of: request.operation,
                                                                                for: client)))
        }
    }

    /// Tells `client` what became of its proposal: the reply `applied` makes
    /// at the committed seq (with `await`, the wait's reply: `awaitID`), or,
    /// for a lost race, the request computed again (at most
    /// ``maxProposalAttempts`` times), or why nothing changed.
    func answerReplicated(_ outcome: ProposalOutcome, to request: Request, from client: ClientController,
                          through replicator: ChangeReplicator, attempt: Int, contended: String, awaitID: UInt64? = nil,
                          applied: (UInt64) -> ReplyEncoder) {
        client.awaitsReplication = false
        let waits = outcomeOfAwait(awaitID, outcome, to: request, from: client)
        guard !client.isClosed else { return }
        switch outcome {
        case _ where waits:
            // Its revision was applied here: the wait replies (an outcome that says otherwise came too late to tell).
            break
        case .applied(let seq):
            client.append(applied(seq), id: request.id)
        case .conflict where attempt < Self.maxProposalAttempts:
            handleReplicated(request, from: client, through: replicator, attempt: attempt + 1)
        case .conflict:
            client.append(reply: ReplyEncoder.failure(id: request.id, KVOEngineError(
                .unavailable, "\(contended) kept changing under this write: "
                    + "\(Self.maxProposalAttempts) attempts lost their race; nothing changed")))
        case .unavailable(let message), .unknown(let message):
            client.append(reply: ReplyEncoder.failure(id: request.id, KVOEngineError(.unavailable, message)))
        case .refused(let error):
            client.append(reply: ReplyEncoder.failure(id: request.id, error))
        }
        answerParked(of: client)
    }

    /// The change `operation` would make to the replica now, checked as
    /// local mode checks it; nil when it changes nothing.
    func proposal(for operation: Operation) throws(KVOEngineError) -> ChangeProposal? {
        let record: ChangeRecord
        let op = operation.op.rawValue
        switch operation {
        case .set(let object, let keyPath, let value):
            if keyPath.isWholeDocument {
                // An object: the decoder's Fields, which make every set (a batch's ops too), refused any other value.
                record = ChangeRecord(object: object, path: [], kind: .setting, old: store.value(object, at: []),
                                      new: value, seq: store.seq + 1, existingKeys: 0)
            } else {
                let (old, existing, _) = try store.checkedValue(object, at: keyPath.components[...])
                record = ChangeRecord(object: object, path: keyPath.components, kind: .setting, old: old, new: value,
                                      seq: store.seq + 1, existingKeys: existing,
                                      createdObject: store.document(object) == nil)
            }
            try resources.admit(record)
        case .delete(let object, let keyPath):
            let path = keyPath?.components ?? []
            guard let old = store.value(object, at: path) else { return nil }
            record = ChangeRecord(object: object, path: path, kind: .setting, old: old, new: nil,
                                  seq: store.seq + 1, existingKeys: path.count)
        case .insert(let object, let keyPath, let index, let values):
            record = try insertion(object, keyPath, at: index, values)
        case .remove(let object, let keyPath, let indexes):
            record = try removal(object, keyPath, at: indexes)
        case .replace(let object, let keyPath, let indexes, let values):
            record = try replacement(object, keyPath, at: indexes, with: values)
        case .add(let object, let keyPath, let amount):
            // A set of the sum, computed here: every kvod applies the document it carries.
            let sum = JSONValue.number(JSONNumber(try sum(object, keyPath, adding: amount)))
            var proposal = try proposal(for: .set(object: object, keyPath: keyPath, value: sum))
            proposal?.change.op = op
            return proposal
        case .get, .observe, .unobserve, .unobserveAll, .ping, .info, .observations, .list, .batch, .metrics, .ack,
             .backup:
            preconditionFailure("not a single change op: \(operation)")
        }
        var document = store.value(record.object, at: [])
        record.apply(to: &document)
        let members: JSONObject? = if case .object(let members)? = document { members } else { nil }
        return ChangeProposal(change: replicated(record, op: op), document: members,
                              modSeqs: proposedModSeqs(after: record, document: members))
    }

    /// The sum an add's `proposal` writes; nil for any other op.
    static func sum(in proposal: ChangeProposal, of operation: Operation) -> Int? {
        guard case .add(_, let keyPath, _) = operation,
              case .number(let number)? = JSONValue.value(in: proposal.document.map(JSONValue.object),
                                                          at: keyPath.components[...]),
              case .integer(let sum) = AddedInteger(number) else { return nil }
        return sum
    }

    /// The record of `record` (made by `op`) that travels through the store.
    func replicated(_ record: ChangeRecord, op: String) -> ReplicatedChange {
        ReplicatedChange(op: op, object: record.object, path: record.path, kind: record.kind, indexes: record.indexes)
    }

    /// Applies a committed change at `seq` (the store's revision), whoever
    /// proposed it: `document` is the object's whole document after it (nil:
    /// deleted), and the change's old and new values are read from the replica
    /// before and from `document`, so every replica derives the same events.
    /// `resync`: the change catches up over compacted history (its events say so).
    public func applyReplicated(_ change: ReplicatedChange, document: JSONObject?, seq: UInt64, resync: Bool = false) {
        applyAwaited(change.context.awaitID, seq: seq) {
            applyReplicatedChange(change, document: document, seq: seq, resync: resync)
        }
    }

    /// ``applyReplicated(_:document:seq:resync:)`` without looking for a writer that awaits it.
    func applyReplicatedChange(_ change: ReplicatedChange, document: JSONObject?, seq: UInt64, resync: Bool = false) {
        let object = change.object
        let keys = change.path[...]
        let before = store.value(object, at: [])
        let after = document.map(JSONValue.object)
        let old: JSONValue?, new: JSONValue?
        switch change.kind {
        case .setting:
            old = JSONValue.value(in: before, at: keys)
            new = JSONValue.value(in: after, at: keys)
        case .insertion, .removal, .replacement:
            old = change.kind == .insertion ? nil : Self.elements(of: before, at: keys, change.indexes)
            new = change.kind == .removal ? nil : Self.elements(of: after, at: keys, change.indexes)
        }
        let existing = (try? store.checkedValue(object, at: keys).existingKeys) ?? 0
        let record = ChangeRecord(
            object: object, path: change.path, kind: change.kind, indexes: change.indexes, old: old, new: new,
            seq: seq, existingKeys: existing,
            memberIndex: new == nil && !keys.isEmpty ? store.memberIndex(object, at: keys) : nil,
            createdObject: before == nil && !keys.isEmpty, cause: change.context.cause,
            lease: replicatedLease(of: change, at: seq), resync: resync)
        guard old != nil || new != nil else { return }
        commit(record) {
            if let document { store.replaceDocument(object, with: document) } else { _ = store.removeObject(object) }
        }
    }

    private static func elements(of document: JSONValue?, at keys: ArraySlice<String>, _ indexes: [Int]) -> JSONValue {
        guard case .array(let elements)? = JSONValue.value(in: document, at: keys) else { return .array([]) }
        return .array(indexes.filter { $0 < elements.count }.map { elements[$0] })
    }

    /// Starts the replica from the store's documents at `revision`, each with
    /// the revision it last changed at. Call before the first client.
    /// `modSeqs`: the trees their records stored (``ReplicatedModSeqs``); a
    /// document without one counts as changed whole at its revision. The
    /// history starts after `revision`: a `since` from it on replays what the
    /// replica applies next (an older `revision` than the store's newest fills
    /// it with the changes between, docs/CLUSTER.md).
    public func loadReplica(documents: [String: (document: JSONObject, modRevision: UInt64)], revision: UInt64,
                            epoch: String, modSeqs: [String: ModSeqTree] = [:]) {
        let state: SavedState
        do {
            let coarse = documents.mapValues { ModSeqTree(madeAt: $0.modRevision) }
            state = try SavedState(documents: documents.mapValues(\.document), seq: revision, history: [],
                                   epoch: epoch, modSeqs: coarse.merging(modSeqs) { $1 })
        } catch {
            preconditionFailure("a state without history is consistent: \(error)")
        }
        restore(state)
        history.start(after: revision)
    }

    /// Brings the replica to the store's documents at `revision` after the
    /// changes since it last followed were compacted away: each document that
    /// differs is set (or deleted) as a whole, at `revision`, with `"resync": true`.
    /// `modSeqs`: every document's tree as ``loadReplica(documents:revision:epoch:modSeqs:)``
    /// would take it, so the replica then agrees with a kvod that loaded the store.
    public func resyncReplica(documents: [String: JSONObject], revision: UInt64,
                              modSeqs: [String: ModSeqTree] = [:]) {
        // By name, not a dictionary's hash order, so that every kvod sends the resync's events in one order.
        let gone = store.documents.keys.filter { documents[$0] == nil }.sorted()
        for object in gone {
            applyReplicated(ReplicatedChange(op: "resync", object: object, path: [], kind: .setting), document: nil,
                            seq: revision, resync: true)
        }
        for (object, document) in documents.sorted(by: { $0.key < $1.key }) where store.document(object) != document {
            applyReplicated(ReplicatedChange(op: "resync", object: object, path: [], kind: .setting),
                            document: document, seq: revision, resync: true)
        }
        for (object, tree) in modSeqs { adoptReplicatedModSeqs(object, tree, revision: revision) }
    }
}
