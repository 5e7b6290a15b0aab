import KVOEngine
import KVOEtcd

/// Following the cluster's epoch key while kvod runs (docs/CLUSTER.md): its
/// changes come through the watch like an object's, but are no object's.
extension EtcdReplica {
    /// A new UUID at the epoch key is the cluster's new epoch: the history held
    /// counted another one. A deleted key is made again, by whichever kvod wins
    /// the race; every kvod then takes the winner's through its watch.
    func followEpoch(_ event: EtcdWatchEvent) {
        if event.kind == .put { adoptEpoch(event.kv) } else { remakeEpoch() }
    }

    /// After a resync: the key may have changed among the revisions compacted away.
    func readEpochAgain() {
        client.range(EtcdRangeRequest(.key(keys.epoch))) { [weak self] result in
            guard let self, case .success(let response) = result else { return }
            if let kv = response.kvs.first { adoptEpoch(kv) } else { remakeEpoch() }
        }
    }

    private func adoptEpoch(_ kv: EtcdKeyValue) {
        let uuid = kv.valueText
        guard !uuid.isEmpty, kv.modRevision > epoch.revision else { return }
        epoch.revision = kv.modRevision
        guard uuid != epoch.uuid else { return }
        epoch.uuid = uuid
        engine.adoptEpoch(epoch.text)
        logger.notice("the cluster's epoch is now \(epoch.text) (\(keys.epoch) = \(uuid)); resume points of the last are compacted")
    }

    private func remakeEpoch() {
        logger.notice("etcd key \(keys.epoch) was deleted; making a new epoch")
        client.txn(ClusterEpoch.creation(keys, uuid: ClusterEpoch.newUUID()), idempotent: true) { [weak self] result in
            if case .failure(let error) = result, let self {
                logger.warning("could not make a new epoch at \(keys.epoch): \(error)")
            }
        }
    }
}
