import KVOEngine
import KVOEtcd
import Logging

/// Turns the end of a leased key (its lease expired or was revoked) into
/// the deletion of its value, with the key's cause (docs/CLUSTER.md). It
/// keeps each leased key it has seen put, since the watch asks for no
/// `prev_kv` (which makes etcd read every change's keys before it again,
/// once per watcher: most of its CPU per change) and a deletion event names
/// only the key. Every
/// kvod sees the end in its watch and proposes the deletion; the first to
/// commit wins, and the others, computing again, find the value no longer
/// held by that lease and drop theirs. One deletion per object at a time:
/// each change of an object is a `Txn` on its one document key.
/// Loop-confined.
final class LeaseReleases {
    private struct Release {
        var path: [String]
        var cause: ChangeCause
        /// The revision of the set that leased the value (the leased key's `mod_revision`).
        var grantedAt: UInt64
        var attempts = 0
    }

    private unowned let engine: Engine
    private let logger: Logger
    /// Where deletions are proposed: the replica.
    weak var replicator: ChangeReplicator?
    /// The leased keys under the prefix, as the snapshot and then the watch
    /// put them: what each leases, and the revision of the set that put it.
    private var leasedKeys: [[UInt8]: (value: LeasedValue, grantedAt: UInt64)] = [:]
    private var queues: [String: [Release]] = [:]
    private var inFlight: Set<String> = []
    /// Objects whose next deletion waits for etcd to be reachable again.
    private var retrying: Set<String> = []
    private var retryTimer: (any ClusterTimer)?
    static let retryMilliseconds: UInt64 = 1_000

    init(engine: Engine, loop: any ClusterLoop, logger: Logger) {
        self.engine = engine
        self.logger = logger
        retryTimer = loop.makeTimer()
    }

    /// Follows the leased keys one revision put and deleted. A key deleted
    /// beside a change of its object was ended by that change (a set or
    /// delete at or above it); one deleted alone, its lease ended: its value
    /// goes, unless `releasing` is false (a batch's revision ends what it
    /// deletes itself).
    func follow(_ events: ArraySlice<EtcdWatchEvent>, keys: ClusterKeys, recordedObjects: Set<String>,
                releasing: Bool = true) {
        for event in events where keys.isLeased(event.kv.key) {
            guard event.kind == .delete else {
                leasedKeys[event.kv.key] = LeasedValue(event.kv.value).map { ($0, UInt64(event.kv.modRevision)) }
                continue
            }
            guard let (leased, grantedAt) = leasedKeys.removeValue(forKey: event.kv.key), releasing,
                  !recordedObjects.contains(leased.object) else { continue }
            release(leased, grantedAt: grantedAt)
        }
    }

    /// Starts again from the leased keys of `snapshot` (at start, after a resync).
    func restart(from snapshot: ReplicaSnapshot, keys: ClusterKeys) {
        leasedKeys = [:]
        for kv in snapshot.leasedKeys where keys.isLeased(kv.key) {
            if let value = LeasedValue(kv.value) { leasedKeys[kv.key] = (value, UInt64(kv.modRevision)) }
        }
    }

    /// Deletes `leased`'s value with its cause, if it is still the one the set at `grantedAt` leased.
    func release(_ leased: LeasedValue, grantedAt: UInt64) {
        queues[leased.object, default: []].append(Release(path: leased.path, cause: leased.cause, grantedAt: grantedAt))
        proposeNext(leased.object)
    }

    private func proposeNext(_ object: String) {
        guard !inFlight.contains(object), !retrying.contains(object), let replicator else { return }
        while var release = queues[object]?.first {
            guard let proposal = engine.releaseProposal(object: object, path: release.path, cause: release.cause,
                                                        grantedAt: release.grantedAt) else {
                dropFirst(object)
                continue
            }
            release.attempts += 1
            queues[object]?[0] = release
            inFlight.insert(object)
            replicator.propose(proposal) { [weak self] outcome in
                guard let self else { return }
                inFlight.remove(object)
                switch outcome {
                case .applied:
                    dropFirst(object)
                case .refused(let error):
                    logger.error("the deletion of \(object)'s \(release.cause) value was refused: \(error.message)")
                    dropFirst(object)
                case .conflict where release.attempts < Engine.maxProposalAttempts:
                    break
                case .conflict, .unavailable, .unknown:
                    // Tried again later against the replica: a deletion that was applied after all is not proposed.
                    switch outcome {
                    case .unavailable(let message), .unknown(let message):
                        logger.notice("the deletion of \(object)'s \(release.cause) value waits: \(message)")
                    default: break
                    }
                    queues[object]?[0].attempts = 0
                    return retryLater(object)
                }
                proposeNext(object)
            }
            return
        }
    }

    private func dropFirst(_ object: String) {
        queues[object]?.removeFirst()
        if queues[object]?.isEmpty == true { queues[object] = nil }
    }

    private func retryLater(_ object: String) {
        let first = retrying.isEmpty
        retrying.insert(object)
        guard first else { return }
        retryTimer?.start(afterMilliseconds: Self.retryMilliseconds) { [weak self] in
            guard let self else { return }
            let objects = retrying
            retrying = []
            for object in objects { proposeNext(object) }
        }
    }

    func close() {
        retryTimer?.close()
        retryTimer = nil
    }
}

extension EtcdReplica {
    /// Tells the engine which values of `snapshot` are leased, and deletes
    /// those whose leases ended while no kvod followed etcd.
    public func restoreLeases(_ snapshot: ReplicaSnapshot, engine: Engine, keys: ClusterKeys) {
        releases.restart(from: snapshot, keys: keys)
        for (leased, grantedAt) in snapshot.restoreLeases(in: engine, keys: keys) {
            releases.release(leased, grantedAt: grantedAt)
        }
    }
}
