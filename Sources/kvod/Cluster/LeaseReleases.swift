import KVOEngine
import KVOEtcd
import Logging

/// Turns the end of a leased key (its lease expired or was revoked) into
/// the deletion of its value, with the key's cause (docs/CLUSTER.md). Every
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
    private var queues: [String: [Release]] = [:]
    private var inFlight: Set<String> = []
    /// Objects whose next deletion waits for etcd to be reachable again.
    private var retrying: Set<String> = []
    private var retryTimer: UVTimer?
    static let retryMilliseconds: UInt64 = 1_000

    init(engine: Engine, loop: UVLoop, logger: Logger) {
        self.engine = engine
        self.logger = logger
        retryTimer = UVTimer(loop: loop)
    }

    /// Notes the leased keys one revision deleted. A key deleted beside a
    /// change of its object was ended by that change (a set or delete at or
    /// above it); one deleted alone, its lease ended: its value goes.
    func noteEnded(_ events: ArraySlice<EtcdWatchEvent>, keys: ClusterKeys, recordedObjects: Set<String>) {
        for event in events where event.kind == .delete && keys.isLeased(event.kv.key) {
            guard let previous = event.prevKV, let leased = LeasedValue(previous.value),
                  !recordedObjects.contains(leased.object) else { continue }
            release(leased, grantedAt: UInt64(previous.modRevision))
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
    func restoreLeases(_ snapshot: ReplicaSnapshot, engine: Engine, keys: ClusterKeys) {
        for (leased, grantedAt) in snapshot.restoreLeases(in: engine, keys: keys) {
            releases.release(leased, grantedAt: grantedAt)
        }
    }
}
