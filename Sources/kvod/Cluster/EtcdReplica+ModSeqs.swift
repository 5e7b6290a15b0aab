import KVOEngine
import KVOEtcd

/// modSeqs over etcd (docs/CLUSTER.md, "modSeqs over etcd"): each record
/// carries its object's tree after the change, within the room etcd's
/// request limit leaves, and every kvod takes the tree of the record it applies.
extension EtcdReplica {
    /// What a `Txn` writes for one object: its document (nil: deleted), its
    /// change record and the modSeqs to store in it.
    struct ObjectWrite {
        let object: String
        let document: JSONObject?
        let record: JSONValue
        let modSeqs: ProposedModSeqs?
    }

    /// The `Txn` that compares `compare` and puts each of `writes` (its
    /// document with its record inside; a deletion, the record beside), then does `extra` (leased keys). Each record holds its object's modSeqs in at
    /// most an equal share of the bytes the `Txn` leaves below etcd's request
    /// limit (and ``ReplicatedModSeqs/maxBytes``): the trees never make a
    /// change too large that would fit without them (one that fits no tree
    /// goes without, and every kvod counts its document as changed whole).
    func txn(comparing compare: [EtcdCompare], writes: [ObjectWrite], besides extra: [EtcdRequestOp] = []) -> EtcdTxnRequest {
        func txn(_ records: [JSONValue]) -> EtcdTxnRequest {
            var success: [EtcdRequestOp] = []
            for (write, record) in zip(writes, records) {
                guard let document = write.document else {
                    // A deletion leaves no value to hold the record: it goes beside.
                    success.append(documentOp(write.object, nil))
                    success.append(.put(EtcdPutRequest(key: Array(keys.record(write.object).utf8),
                                                       value: record.jsonBytes)))
                    continue
                }
                success.append(.put(EtcdPutRequest(key: Array(keys.document(write.object).utf8),
                                                   value: ClusterKeys.storedValue(document: document, record: record))))
            }
            return EtcdTxnRequest(compare: compare, success: success + extra)
        }
        let bare = txn(writes.map(\.record))
        guard writes.contains(where: { $0.modSeqs != nil }) else { return bare }
        // The member's name and a length prefix that may grow by up to 4 bytes.
        let overhead = ReplicatedModSeqs.field.utf8.count + 8
        let share = min(ReplicatedModSeqs.maxBytes, (limits.maxRequestBytes - bare.proposalBytes) / writes.count)
        guard share > overhead else { return bare }
        return txn(writes.map { write in
            ReplicatedModSeqs.record(write.record, with: write.modSeqs?.json(maxBytes: share - overhead))
        })
    }

}
