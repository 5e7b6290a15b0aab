import KVOEngine
import KVOEtcd
import KVOProtocol
import KVOValues

/// What a kvod knows of how far behind etcd its replica may be, from its
/// watch: `info`'s `cluster` (docs/PROTOCOL.md).
struct WatchProgress {
    /// The newest revision of the store this kvod has heard of (any prefix):
    /// from the watch's creation, responses and progress notifications, and
    /// its own `Txn`s' answers.
    private(set) var etcdRevision: Int64 = 0
    /// The newest revision the watch has delivered or passed: everything of
    /// the prefix up to it is applied. A response carries what the watch has
    /// up to its header's revision; a progress notification says it has
    /// nothing newer.
    private(set) var passedRevision: Int64 = 0
    /// When the watch last said anything.
    private(set) var lastResponse: ContinuousClock.Instant?

    mutating func heard(_ update: EtcdWatchUpdate) {
        switch update {
        case .created(let header):
            lastResponse = .now
            etcdRevision = max(etcdRevision, header.revision)
        case .events(let header, _):
            lastResponse = .now
            heard(passed: header.revision)
        case .progress(let revision):
            lastResponse = .now
            heard(passed: revision)
        case .compacted, .cancelled, .ended:
            break
        }
    }

    /// etcd answered a request at `revision`.
    mutating func heard(revision: Int64) {
        etcdRevision = max(etcdRevision, revision)
    }

    /// The newest revision of this kvod's own committed changes: one the
    /// watch must deliver, whatever else etcd holds (other prefixes' writes
    /// move the store's revision without giving this watch anything to pass).
    private(set) var committed: Int64 = 0

    /// A change of this kvod's was committed at `revision`.
    mutating func committed(at revision: Int64) {
        heard(revision: revision)
        committed = max(committed, revision)
    }

    private mutating func heard(passed revision: Int64) {
        etcdRevision = max(etcdRevision, revision)
        passedRevision = max(passedRevision, revision)
    }

    /// Revisions etcd has made that this kvod has not seen its watch deliver or pass.
    func lag(applied: Int64) -> Int64 {
        max(0, etcdRevision - max(applied, passedRevision))
    }
}

extension EtcdReplica {
    /// `info`'s `cluster`: the endpoints and the one in use, whether the
    /// watch is in place (and so the member has a leader: the watch asks
    /// `hasleader`), the revisions applied and known, the lag between them,
    /// and how long ago the watch last spoke.
    public var info: JSONObject {
        var members = JSONObject([
            InfoFigure.Cluster.endpoints: .array(client.endpoints.map(JSONValue.string)),
            .endpoint: .string(watchEndpoint ?? client.currentEndpoint),
            .leader: .bool(isFollowing),
            .stale: .bool(isStale),
            .appliedRevision: Self.number(appliedRevision),
            .etcdRevision: Self.number(max(progress.etcdRevision, appliedRevision)),
            // Events delivered but waiting for their slice are not caught up with yet.
            .lag: Self.number(unappliedStart < unapplied.count ? max(0, progress.etcdRevision - appliedRevision)
                                                              : progress.lag(applied: appliedRevision)),
            .unappliedEvents: Self.number(Int64(unapplied.count - unappliedStart)),
            .largestWatchSlice: Self.number(Int64(largestSlice)),
            .watchPauses: Self.number(Int64(watchPauses)),
            .clusterId: .string(String(epoch.clusterID, radix: 16)),
        ])
        if let last = progress.lastResponse {
            let elapsed = ContinuousClock.now - last
            members[InfoFigure.Cluster.lastWatchResponseMs] = Self.number(elapsed.components.seconds * 1000
                + elapsed.components.attoseconds / 1_000_000_000_000_000)
        }
        if isStale { members[InfoFigure.Cluster.error] = .string(staleness) }
        return members
    }

    private static func number(_ value: Int64) -> JSONValue {
        .number(JSONNumber(validatedLiteral: String(value)))
    }
}
