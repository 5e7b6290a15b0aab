import KVOEngine
import KVOEtcd

/// Following the cluster's epoch key while kvod runs (docs/CLUSTER.md): its
/// changes come through the watch like an object's, but are no object's.
extension EtcdReplica {
    /// A new UUID at the epoch key is the cluster's new epoch: the history held
    /// counted another one. A deleted key is made again, by whichever kvod wins
    /// the race; every kvod then takes the winner's through its watch.
    func followEpoch(_ event: EtcdWatchEvent) {
        guard event.kind == .put else {
            logger.notice("etcd key \(keys.epoch) was deleted; making a new epoch")
            let proposed = ClusterEpoch.newUUID()
            client.txn(ClusterEpoch.creation(keys, uuid: proposed)) { [weak self] result in
                if case .failure(let error) = result {
                    self?.logger.warning("could not make a new epoch at \(self?.keys.epoch ?? ""): \(error)")
                }
            }
            return
        }
        let uuid = event.kv.valueText
        guard !uuid.isEmpty, uuid != epoch.uuid else { return }
        epoch.uuid = uuid
        engine.adoptEpoch(epoch.text)
        logger.notice("the cluster's epoch is now \(epoch.text) (\(keys.epoch) = \(uuid)); resume points of the last are compacted")
    }
}
