import KVOCluster
import KVOEngine
import KVOEtcd

/// The epoch read (or made) before the daemon's loop runs, on a poll(2) loop of its own.
extension ClusterEpoch {
    /// Reads the cluster's epoch before the daemon's loop runs, making the
    /// epoch key if this is the first kvod of the prefix.
    static func readAtStart(_ configuration: EtcdClient.Configuration, keys: ClusterKeys) throws(DaemonError) -> Self {
        let proposed = newUUID()
        let endpoints = configuration.endpoints.joined(separator: ",")
        // Made again on the next endpoint if one hangs: a second creation reads the first's key.
        switch try EtcdStartupCall.run(configuration, { $0.txn(creation(keys, uuid: proposed), idempotent: true, $1) }) {
        case .success(let response):
            guard let epoch = Self(response, proposed: proposed) else {
                throw .cannotReachEtcd("etcd (\(endpoints)) holds no value at \(keys.epoch) although it exists")
            }
            return epoch
        case .failure(let error):
            throw .cannotReachEtcd("cannot read \(keys.epoch) from etcd (\(endpoints)): \(error)")
        }
    }
}

