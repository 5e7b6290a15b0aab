import KVOEngine
import KVOEtcd

/// The documents under the prefix as one etcd range read them: what a kvod
/// starts from, and what it resyncs to after a compaction.
struct ReplicaSnapshot {
    var documents: [String: (document: JSONObject, modRevision: UInt64)] = [:]
    /// The leased keys and notes of values with a lifetime (``ClusterKeys/leased(_:_:_:)``).
    var leasedKeys: [EtcdKeyValue] = []
    var revision: Int64

    init(_ response: EtcdRangeResponse, keys: ClusterKeys) {
        revision = response.header.revision
        for kv in response.kvs {
            if keys.family(of: kv.key) != nil { leasedKeys.append(kv) }
            guard case .document(let object)? = keys.entry(kv.key), let document = ClusterKeys.document(kv.value) else {
                continue
            }
            documents[object] = (document, UInt64(kv.modRevision))
        }
    }

    /// The whole prefix: the documents, and the leased keys at the same revision.
    static func request(_ keys: ClusterKeys) -> EtcdRangeRequest { EtcdRangeRequest(.prefix(keys.prefix)) }

    /// Reads the snapshot before the daemon's loop runs, on a poll(2) loop of
    /// its own: no client may see the store before it is loaded.
    static func readAtStart(_ configuration: EtcdClient.Configuration, keys: ClusterKeys) throws(DaemonError) -> Self {
        switch try EtcdStartupCall.run(configuration, { $0.range(request(keys), $1) }) {
        case .success(let response): return Self(response, keys: keys)
        case .failure(let error):
            throw .cannotReachEtcd("cannot read \(keys.prefix) from etcd (\(configuration.endpoints.joined(separator: ","))): \(error)")
        }
    }
}
