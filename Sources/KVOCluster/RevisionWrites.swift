import KVOEngine
import KVOEtcd
import KVOValues

/// What one revision wrote to the objects' keys, each key read once: the
/// documents put or deleted, in event order, and each object's change
/// record, read from inside its document's value (kvod's puts) or from the
/// record key put beside it (a deletion, or an older kvod's change), the
/// one inside winning (docs/CLUSTER.md).
struct RevisionWrites {
    /// Each object's document as put (nil: deleted), in event order.
    var documents: [(object: String, document: JSONObject?)] = []
    /// The keys put with a value that is not a JSON object (someone used `etcdctl`), to log: left out.
    var unreadable: [String] = []
    var records: [String: JSONValue] = [:]

    init(_ events: ArraySlice<EtcdWatchEvent>, keys: ClusterKeys) {
        var beside: [String: JSONValue] = [:]
        for event in events {
            switch keys.entry(event.kv.key) {
            case .record(let object)?:
                if event.kind == .put, let json = try? JSONReader.parse(event.kv.value) { beside[object] = json }
            case .document(let object)?:
                guard event.kind == .put else {
                    documents.append((object, nil))
                    continue
                }
                guard let stored = ClusterKeys.stored(event.kv.value) else {
                    unreadable.append(event.kv.keyText)
                    continue
                }
                documents.append((object, stored.document))
                if let record = stored.record { records[object] = record }
            case nil:
                continue
            }
        }
        records.merge(beside) { inside, _ in inside }
    }
}
