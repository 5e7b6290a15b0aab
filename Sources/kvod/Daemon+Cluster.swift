import KVOCluster
import KVOEngine
import KVOEtcd

/// `--etcd`: kvod as the local agent of an etcd cluster (docs/CLUSTER.md).
/// The engine's replica is read from etcd before the socket listens, then
/// follows it; change ops go through ``EtcdReplica``.
extension Daemon {
    func openCluster() throws(DaemonError) {
        guard !configuration.etcdEndpoints.isEmpty else { return }
        let keys = ClusterKeys(prefix: configuration.etcdPrefix)
        let etcd = try EtcdEndpointOrder.answeringFirst(EtcdClient.Configuration(endpoints: configuration.etcdEndpoints))
        let epoch = try ClusterEpoch.readAtStart(etcd, keys: keys)
        // Further back than --history revisions, the history would keep none of the changes read
        // (unless other prefixes share etcd).
        let window = min(configuration.etcdHistoryRevisions, configuration.historyCapacity)
        let start = try ReplicaStart.read(etcd, keys: keys, epoch: epoch, window: window)
        let snapshot = start.snapshot
        engine.loadReplica(documents: snapshot.documents, revision: UInt64(snapshot.revision), epoch: epoch.text,
                           modSeqs: snapshot.modSeqs)
        let driver = UVEtcdDriver(loop: loop)
        let client: EtcdClient
        do {
            client = try EtcdClient(etcd, driver: driver)
        } catch {
            throw .cannotReachEtcd("\(error)")
        }
        driver.client = client
        etcdDriver = driver
        let replica = EtcdReplica(backend: client, keys: keys, snapshot: snapshot,
                                  epoch: epoch, engine: engine, leaseTTL: configuration.etcdLeaseTTL, loop: loop,
                                  logger: logger)
        replica.commitTimed = { [unowned self] outcome, nanoseconds in
            clusterCommitDurations.record(labelIndex: outcome.metricIndex, nanoseconds: nanoseconds)
        }
        replica.limits = configuration.etcdLimits
        replica.watchBufferBytes = configuration.etcdWatchBufferBytes
        replica.startRevision = start.target
        engine.replicator = replica
        engine.pipelinesChanges = true
        replica.restoreLeases(snapshot, engine: engine, keys: keys)
        cluster = replica
        replica.start()
        replica.startLivenessChecks()
        logger.info("""
            over etcd (\(configuration.etcdEndpoints.joined(separator: ",")), prefix \(keys.prefix)): \
            \(snapshot.documents.count) objects at revision \(snapshot.revision), epoch \(epoch.text)
            """)
        catchUp(replica, to: start.target)
    }

    /// Runs the loop until the watch has applied every revision up to
    /// `target`, so that no client sees the replica behind where etcd was when
    /// kvod started (and the history holds those changes). Stops early when
    /// the watch is lost (the replica is then stale, as whenever etcd is out of
    /// reach, and goes on catching up when it is back) or a signal stops kvod.
    private func catchUp(_ replica: EtcdReplica, to target: Int64) {
        let from = replica.appliedRevision
        guard from < target else { return }
        let started = ContinuousClock.now
        while replica.appliedRevision < target, replica.isFollowing, state == .starting { loop.run(.once) }
        let elapsed = ContinuousClock.now - started
        logger.info("""
            history from revision \(from): applied up to \(replica.appliedRevision) of \(target) in \(elapsed), \
            \(engine.history.count) changes held
            """)
    }

    func closeCluster() {
        cluster?.close()
        cluster = nil
        etcdDriver?.close()
        etcdDriver = nil
        engine.replicator = nil
    }
}
