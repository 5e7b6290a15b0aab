import KVOEngine
import KVOEtcd
import KVOValues

/// `batch` over etcd (docs/CLUSTER.md): one `Txn` over every object the batch
/// touches, and the revision it makes replayed op by op by every kvod.
extension EtcdReplica {
    /// A changed object is one of the `Txn`'s operations, its document with its record inside (a deleted
    /// one two: a group with deletions over the limit goes as each connection's own `Txn`).
    public var maxObjectsPerProposal: Int { max(1, limits.maxTxnOps) }

    /// Sends `batch` as one `Txn`: each object it read or changed compared by
    /// its `mod_revision`; each object it changed put (or deleted) once,
    /// whatever number of its ops changed it (etcd allows one write per key in
    /// a `Txn`), with a record of those ops' steps beside it; and the leased
    /// keys its ops end or make (``BatchLeasePlan``), once their leases are granted.
    public func propose(_ batch: BatchProposal, _ done: @escaping (ProposalOutcome) -> Void) {
        let proposal = newProposalID()
        var compared: [String: Int64] = [:]
        var compare: [EtcdCompare] = []
        for object in batch.objects {
            let revision = modRevisions[object] ?? 0
            compared[object] = revision
            compare.append(.modRevision(of: keys.document(object), is: revision))
        }
        let plan = BatchLeasePlan(batch) { engine.holdsLeases(in: $0) }
        if plan.needsLeases {
            // etcd's limits first, with the largest lease ids: no lease is granted for a batch they refuse.
            let placeholders = [EtcdLeases.TTLLease](repeating: .placeholder, count: plan.ttls.count)
            let provisional = txn(comparing: compare,
                                  writes: writes(of: batch, proposal: proposal,
                                                  deadlines: plan.deadlines(placeholders.map(\.expires))),
                                  besides: leases.operations(plan, ephemeralLease: .max, ttlLeases: placeholders))
            if let refusal = limits.refusal(of: provisional, "this batch") { return done(.refused(refusal)) }
        }
        // Without leases to grant, the operations come at once (no ttl, no connection's lease asked for).
        leases.operations(for: plan) { [weak self] result in
            guard let self else { return }
            guard case .success(let leased) = result else {
                if case .failure(let failure) = result { done(.unavailable("\(failure); nothing changed")) }
                return
            }
            let request = txn(comparing: compare,
                              writes: writes(of: batch, proposal: proposal, deadlines: plan.deadlines(leased.expires)),
                              besides: leased.operations)
            commit(request, comparing: compared, "this batch", proposal: proposal, answered: { [weak self] in
                self?.leases.settled(leased, $0)
            }, done)
        }
    }

    /// The document and record of each object `batch` changes: the record
    /// its steps, each set with a `ttl` telling when its lease ends
    /// (`deadlines`, by `[object] + path`), who made it and the `proposal` id.
    private func writes(of batch: BatchProposal, proposal: UInt64,
                        deadlines: [[String]: Double] = [:]) -> [ObjectWrite] {
        batch.changes.map { change in
            var steps = change.steps
            for index in steps.indices where steps[index].change.context.lifetime?.ttl != nil {
                steps[index].change.context.expires = deadlines[[change.object] + steps[index].change.path]
            }
            // Who made it, beside the steps (older readers ignore it).
            var record = ReplicatedBatchStep.record(steps)
            if case .object(var members) = record {
                var context = batch.context
                context.host = leases.host
                context.proposal = proposal
                context.write(to: &members)
                record = .object(members)
            }
            return ObjectWrite(object: change.object, document: change.document, record: record, modSeqs: change.modSeqs)
        }
    }

    /// Applies the revision when it is a batch's (its records are batch
    /// records): every step of every object, in op order; false, touching
    /// nothing, when it is not.
    func applyBatch(revision: Int64, _ writes: RevisionWrites) -> Bool {
        var steps: [ReplicatedBatchStep] = []
        var modSeqs: [String: ModSeqTree] = [:]
        var isBatch = false
        for (object, json) in writes.records {
            guard let own = ReplicatedBatchStep.steps(object: object, record: json) else { continue }
            isBatch = true
            noteApplied(own.first?.change.context.proposal, at: revision)
            steps += own
            modSeqs[object] = ReplicatedModSeqs.tree(inRecord: json, revision: UInt64(revision))
        }
        guard isBatch else { return false }
        var documents: [String: JSONObject?] = [:]
        for (object, document) in writes.documents { documents.updateValue(document, forKey: object) }
        engine.applyReplicatedBatch(steps, documents: documents, seq: UInt64(revision))
        for object in documents.keys {
            engine.adoptReplicatedModSeqs(object, modSeqs[object], revision: UInt64(revision))
        }
        for (object, document) in documents { modRevisions[object] = document == nil ? nil : revision }
        return true
    }
}
