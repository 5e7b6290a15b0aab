import KVOEngine
import KVOEtcd

/// `--etcd`: kvod as the local agent of an etcd cluster (docs/CLUSTER.md).
/// The engine's replica is read from etcd before the socket listens, then
/// follows it; change ops go through ``EtcdReplica``.
extension Daemon {
    func openCluster() throws(DaemonError) {
        guard !configuration.etcdEndpoints.isEmpty else { return }
        let keys = ClusterKeys(prefix: configuration.etcdPrefix)
        let etcd = EtcdClient.Configuration(endpoints: configuration.etcdEndpoints)
        let epoch = try ClusterEpoch.readAtStart(etcd, keys: keys)
        let snapshot = try ReplicaSnapshot.readAtStart(etcd, keys: keys)
        engine.loadReplica(documents: snapshot.documents, revision: UInt64(snapshot.revision), epoch: epoch.text,
                           modSeqs: snapshot.modSeqs)
        let replica = try EtcdReplica(configuration: etcd, keys: keys, snapshot: snapshot, epoch: epoch,
                                      engine: engine, leaseTTL: configuration.etcdLeaseTTL, loop: loop, logger: logger)
        replica.limits = configuration.etcdLimits
        engine.replicator = replica
        engine.pipelinesChanges = true
        replica.restoreLeases(snapshot, engine: engine, keys: keys)
        cluster = replica
        replica.start()
        logger.info("""
            over etcd (\(configuration.etcdEndpoints.joined(separator: ",")), prefix \(keys.prefix)): \
            \(snapshot.documents.count) objects at revision \(snapshot.revision), epoch \(epoch.text)
            """)
    }

    func closeCluster() {
        cluster?.close()
        cluster = nil
        engine.replicator = nil
    }
}
