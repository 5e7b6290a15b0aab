import KVOCluster
import KVOEngine
import KVOEtcd

extension ReplicaSnapshot {
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
