import KVOEngine
import KVOEtcd

/// `batch` over etcd (docs/CLUSTER.md): one `Txn` over every object the batch
/// touches, and the revision it makes replayed op by op by every kvod.
extension EtcdReplica {
    /// Sends `batch` as one `Txn`: each object it read or changed compared by
    /// its `mod_revision`; each object it changed put (or deleted) once,
    /// whatever number of its ops changed it (etcd allows one write per key in
    /// a `Txn`), with a record of those ops' steps beside it.
    func propose(_ batch: BatchProposal, _ done: @escaping (ProposalOutcome) -> Void) {
        var compared: [String: Int64] = [:]
        var compare: [EtcdCompare] = []
        for object in batch.objects {
            let revision = modRevisions[object] ?? 0
            compared[object] = revision
            compare.append(.modRevision(of: keys.document(object), is: revision))
        }
        let writes = batch.changes.map { change in
            // Who made it, beside the steps (older readers ignore it).
            var record = ReplicatedBatchStep.record(change.steps)
            if case .object(var members) = record {
                ChangeContext(uid: batch.uid, host: leases.host).write(to: &members)
                record = .object(members)
            }
            return ObjectWrite(object: change.object, document: change.document, record: record, modSeqs: change.modSeqs)
        }
        let request = txn(comparing: compare, writes: writes,
                          besides: leases.operations(endedBy: batch) { engine.holdsLeases(in: $0) })
        commit(request, comparing: compared, "this batch", done)
    }

    /// Applies the revision when it is a batch's (its records are batch
    /// records): every step of every object, in op order; false, touching
    /// nothing, when it is not.
    func applyBatch(revision: Int64, _ events: ArraySlice<EtcdWatchEvent>) -> Bool {
        var steps: [ReplicatedBatchStep] = []
        var modSeqs: [String: ModSeqTree] = [:]
        var isBatch = false
        for event in events where event.kind == .put {
            guard case .record(let object)? = keys.entry(event.kv.key), let json = try? JSONReader.parse(event.kv.value),
                  let own = ReplicatedBatchStep.steps(object: object, record: json) else { continue }
            isBatch = true
            steps += own
            modSeqs[object] = ReplicatedModSeqs.tree(inRecord: json, revision: UInt64(revision))
        }
        guard isBatch else { return false }
        var documents: [String: JSONObject?] = [:]
        for event in events {
            guard case .document(let object)? = keys.entry(event.kv.key) else { continue }
            guard event.kind == .put else {
                documents.updateValue(nil, forKey: object)
                continue
            }
            guard let document = ClusterKeys.document(event.kv.value) else {
                logger.error("etcd key \(event.kv.keyText) at revision \(revision) is not a JSON object; ignored")
                continue
            }
            documents[object] = document
        }
        engine.applyReplicatedBatch(steps, documents: documents, seq: UInt64(revision))
        for object in documents.keys {
            engine.adoptReplicatedModSeqs(object, modSeqs[object], revision: UInt64(revision))
        }
        for (object, document) in documents { modRevisions[object] = document == nil ? nil : revision }
        return true
    }
}
