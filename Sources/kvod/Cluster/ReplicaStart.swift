import KVOCluster
import KVOEngine
import KVOEtcd

/// Where a kvod starting over etcd begins (docs/CLUSTER.md, "A kvod just
/// started"): the prefix as it was some revisions back, so that its watch,
/// from the revision after, fills the history through the path every later
/// change takes, and a `since` works as on a kvod that ran all along.
struct ReplicaStart {
    /// The prefix at the revision the history starts after.
    var snapshot: ReplicaSnapshot
    /// The newest revision of a key under the prefix when kvod started: the
    /// watch catches up to it before the socket listens.
    var target: Int64

    /// Reads the prefix at the newest of: `window` revisions
    /// (`--etcd-history-revisions`) before etcd's current one, the epoch key's revision (older changes
    /// counted another epoch) and, when compaction discarded those, etcd's
    /// compact revision; the newest revision when none is older than the
    /// prefix's last change (nothing to replay), `window` is 0, or the
    /// compaction moved past the revision chosen meanwhile.
    static func read(_ configuration: EtcdClient.Configuration, keys: ClusterKeys, epoch: ClusterEpoch,
                     window: Int) throws(DaemonError) -> Self {
        let newestFirst = EtcdRangeRequest(.prefix(keys.prefix), limit: 1, keysOnly: true, newestFirst: true)
        let newest = try value(EtcdStartupCall.run(configuration) { $0.range(newestFirst, $1) }, configuration, keys)
        let target = newest.kvs.first?.modRevision ?? 0
        var from = max(newest.header.revision - Int64(window), epoch.revision)
        guard window > 0, from < target else { return try newestState(configuration, keys) }
        func state(at revision: Int64) throws(DaemonError) -> Result<EtcdRangeResponse, EtcdError> {
            try EtcdStartupCall.run(configuration) { $0.range(ReplicaSnapshot.request(keys, revision: revision), $1) }
        }
        var result = try state(at: from)
        if case .failure(let error) = result, error.isCompactedRevision {
            guard let compact = try compactRevision(configuration, keys, after: from, atMost: newest.header.revision),
                  compact < target else { return try newestState(configuration, keys) }
            from = compact
            result = try state(at: from)
        }
        switch result {
        case .success(let response):
            return Self(snapshot: ReplicaSnapshot(response, keys: keys, revision: from), target: target)
        case .failure(let error) where error.isCompactedRevision:
            return try newestState(configuration, keys)  // the compaction moved on meanwhile
        case .failure(let error):
            throw failure(configuration, keys, error)
        }
    }

    /// The prefix at etcd's newest revision, with no history to replay.
    private static func newestState(_ configuration: EtcdClient.Configuration,
                                    _ keys: ClusterKeys) throws(DaemonError) -> Self {
        let newest = try value(EtcdStartupCall.run(configuration) { $0.range(ReplicaSnapshot.request(keys), $1) }, configuration, keys)
        let snapshot = ReplicaSnapshot(newest, keys: keys)
        return Self(snapshot: snapshot, target: snapshot.revision)
    }

    /// The oldest revision etcd can still read (its compact revision): found
    /// by bisection between a revision compacted and one readable, each probe
    /// a read of the one epoch key (etcd 3.4 tells it no other way without a
    /// watch). Nil when a probe fails otherwise.
    private static func compactRevision(_ configuration: EtcdClient.Configuration, _ keys: ClusterKeys,
                                        after compacted: Int64, atMost readable: Int64) throws(DaemonError) -> Int64? {
        var low = compacted, high = readable
        while high - low > 1 {
            let middle = low + (high - low) / 2
            let probe = EtcdRangeRequest(.key(keys.epoch), revision: middle, limit: 1, keysOnly: true)
            switch try EtcdStartupCall.run(configuration, { $0.range(probe, $1) }) {
            case .success: high = middle
            case .failure(let error) where error.isCompactedRevision: low = middle
            case .failure: return nil
            }
        }
        return high
    }

    private static func value<T>(_ result: Result<T, EtcdError>, _ configuration: EtcdClient.Configuration,
                                 _ keys: ClusterKeys) throws(DaemonError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw failure(configuration, keys, error)
        }
    }

    private static func failure(_ configuration: EtcdClient.Configuration, _ keys: ClusterKeys,
                                _ error: EtcdError) -> DaemonError {
        .cannotReachEtcd("cannot read \(keys.prefix) from etcd (\(configuration.endpoints.joined(separator: ","))): \(error)")
    }
}
