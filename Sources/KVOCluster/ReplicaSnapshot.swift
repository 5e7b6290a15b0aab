import KVOEngine
import KVOEtcd
import KVOValues

/// The documents under the prefix as one etcd range read them: what a kvod
/// starts from, and what it resyncs to after a compaction.
public struct ReplicaSnapshot {
    /// Each object's document and the revision it last changed at.
    public var documents: [String: (document: JSONObject, modRevision: UInt64)] = [:]
    /// Each document's modSeqs: those its record, put with it, stored
    /// (``ReplicatedModSeqs``), which every kvod that followed its changes
    /// holds; without them, the whole document at its `mod_revision`.
    public var modSeqs: [String: ModSeqTree] = [:]
    /// The leased keys and notes of values with a lifetime (``ClusterKeys/leased(_:_:_:)``).
    public var leasedKeys: [EtcdKeyValue] = []
    /// The revision the snapshot is at: the watch goes on from the one after.
    public var revision: Int64
    /// The raft term of the answer: a linearizable read's, so one with a leader.
    public var raftTerm: UInt64

    /// `revision`: the one the range read at (0: the newest, the response's).
    public init(_ response: EtcdRangeResponse, keys: ClusterKeys, revision: Int64 = 0) {
        self.revision = revision != 0 ? revision : response.header.revision
        raftTerm = response.header.raftTerm
        var records: [String: EtcdKeyValue] = [:]
        var inside: [String: JSONValue] = [:]
        for kv in response.kvs {
            if keys.family(of: kv.key) != nil { leasedKeys.append(kv) }
            switch keys.entry(kv.key) {
            case .document(let object)?:
                guard let stored = ClusterKeys.stored(kv.value) else { continue }
                documents[object] = (stored.document, UInt64(kv.modRevision))
                inside[object] = stored.record
            case .record(let object)?:
                records[object] = kv
            case nil:
                continue
            }
        }
        for (object, entry) in documents {
            modSeqs[object] = ModSeqTree(replacedAt: entry.modRevision, modifiedAt: entry.modRevision)
            // The record inside the document's value, else one beside it (an older kvod's) of the same
            // revision: one of another revision belongs to an older document (one written without kvod since).
            var json = inside[object]
            if json == nil, let record = records[object], UInt64(record.modRevision) == entry.modRevision {
                json = try? JSONReader.parse(record.value)
            }
            guard let json, let tree = ReplicatedModSeqs.tree(inRecord: json, revision: entry.modRevision) else { continue }
            modSeqs[object] = tree
        }
    }

    /// The whole prefix: the documents, their records and the leased keys, at
    /// one revision (0: the newest).
    public static func request(_ keys: ClusterKeys, revision: Int64 = 0) -> EtcdRangeRequest {
        EtcdRangeRequest(.prefix(keys.prefix), revision: revision)
    }
}
