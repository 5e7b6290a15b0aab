import KVOEngine
import KVOEtcd
import KVOValues

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
        // Each document and bare record written once: the trees' share needs the bare `Txn`'s size,
        // and a record with its tree is the bare one with a last member more (``withModSeqs``).
        let documents = writes.map { $0.document.map { JSONValue.object($0).jsonBytes } }
        func txn(_ records: [[UInt8]]) -> EtcdTxnRequest {
            var success: [EtcdRequestOp] = []
            success.reserveCapacity(writes.count + extra.count)
            for (index, record) in records.enumerated() {
                let object = writes[index].object
                guard let document = documents[index] else {
                    // A deletion leaves no value to hold the record: it goes beside.
                    success.append(documentOp(object, nil))
                    success.append(.put(EtcdPutRequest(key: Array(keys.record(object).utf8), value: record)))
                    continue
                }
                success.append(.put(EtcdPutRequest(key: Array(keys.document(object).utf8),
                                                   value: ClusterKeys.storedValue(documentBytes: document, record: record))))
            }
            return EtcdTxnRequest(compare: compare, success: success + extra)
        }
        let records = writes.map(\.record.jsonBytes)
        let bare = txn(records)
        guard writes.contains(where: { $0.modSeqs != nil }) else { return bare }
        // The member's name and a length prefix that may grow by up to 4 bytes.
        let overhead = ReplicatedModSeqs.field.utf8.count + 8
        let share = min(ReplicatedModSeqs.maxBytes, (limits.maxRequestBytes - bare.proposalBytes) / writes.count)
        guard share > overhead else { return bare }
        return txn(writes.indices.map { index in
            let write = writes[index]
            guard let modSeqs = write.modSeqs?.json(maxBytes: share - overhead) else { return records[index] }
            return Self.withModSeqs(records[index], modSeqs, of: write.record)
        })
    }

    /// `bytes`, the written `record`, with its modSeqs `tree` as a last member: what
    /// ``ReplicatedModSeqs/record(_:with:)`` makes, written, without writing the record again.
    static func withModSeqs(_ bytes: [UInt8], _ tree: JSONValue, of record: JSONValue) -> [UInt8] {
        guard case .object(let members) = record, !members.isEmpty, members[ReplicatedModSeqs.field] == nil,
              bytes.last == UInt8(ascii: "}") else {
            return ReplicatedModSeqs.record(record, with: tree).jsonBytes
        }
        var spliced = bytes
        spliced.removeLast()
        spliced += #","\#(ReplicatedModSeqs.field)":"#.utf8
        spliced += tree.jsonBytes
        spliced.append(UInt8(ascii: "}"))
        return spliced
    }

}
