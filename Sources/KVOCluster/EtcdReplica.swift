import KVOEngine
import KVOEtcd
import KVOValues
import Logging

/// The engine's ``ChangeReplicator`` over etcd (docs/CLUSTER.md): proposes each
/// change as one `Txn` guarded by the object key's `mod_revision`, and follows
/// the prefix with one watch, applying every change it delivers to the engine
/// at its revision, this kvod's own changes included. It talks to etcd
/// through a ``ClusterBackend`` and keeps time with a ``ClusterLoop``, both
/// the daemon's. Loop-confined.
public final class EtcdReplica: ChangeReplicator {
    let client: any ClusterBackend
    let keys: ClusterKeys
    unowned let engine: Engine
    let logger: Logger
    let loop: any ClusterLoop
    /// The leases of values with a lifetime, and the deletions their ends make.
    let leases: EtcdLeases
    let releases: LeaseReleases
    private(set) var watch: (any ClusterWatch)?
    /// The probes that tell a stalled watch (``WatchLiveness``).
    var liveness = WatchLiveness()
    var livenessTimer: (any ClusterTimer)?
    /// The revision of the last change applied to the engine.
    public private(set) var appliedRevision: Int64
    /// Each object's key's `mod_revision` as the replica holds it: what a `Txn` compares.
    var modRevisions: [String: Int64]
    /// Whether the replica follows etcd: from the snapshot read at start (the
    /// first watch starts at its revision, so it delivers what is committed
    /// before it is in place), then while a watch is in place.
    public internal(set) var isFollowing = true
    /// Whether a linearizable read since the watch attached showed the replica
    /// caught up (EtcdReplica+Freshness): until then reads say `stale`.
    var isCaughtUp = true
    /// The revision the replica must apply to be caught up, once a read told it.
    var catchUpTarget: Int64?
    /// The watch whose catching up a read is asking about (``watchGeneration``).
    var confirmingGeneration: Int?
    /// Counts the watches started, so that an answer about an earlier one is not taken for the current one's.
    private(set) var watchGeneration = 0
    /// Why it does not, for `unavailable`, `info` and the log.
    var lastFailure = "not following etcd"
    /// The prefix's newest revision when kvod started: until the replica has
    /// applied it, it is behind where etcd was then and says so (stale), also
    /// once a watch lost during the start's replay is in place again
    /// (docs/CLUSTER.md, "A kvod just started").
    public var startRevision: Int64 = 0
    /// How far behind etcd the replica may be, for `info`.
    var progress = WatchProgress()
    /// The cluster's epoch, followed while it runs.
    var epoch: ClusterEpoch
    /// Proposals answered by etcd, waiting for the watch to bring the replica
    /// where their outcome can be told: a commit's revision applied, or a
    /// lost compare's object changed.
    private var waiting: [(isDue: () -> Bool, outcome: ProposalOutcome, done: (ProposalOutcome) -> Void)] = []
    private var resumeTimer: (any ClusterTimer)?
    /// Watch events delivered and not applied yet, from ``unappliedStart`` on
    /// (EtcdReplica+ApplySlices), and the timer that applies the next slice.
    var unapplied: [EtcdWatchEvent] = []
    var unappliedStart = 0
    /// Their keys' and values' bytes (EtcdReplica+ApplySlices).
    var unappliedBytes = 0
    var sliceTimer: (any ClusterTimer)?
    /// The most watch events applied in one turn since start (`info`'s `largestWatchSlice`).
    var largestSlice = 0
    /// How many bytes of unapplied events stop the watch from being read (`--etcd-watch-buffer`).
    public var watchBufferBytes = EtcdReplica.defaultWatchBufferBytes
    /// How often the watch was paused for its slices to catch up (`info`'s `watchPauses`).
    var watchPauses = 0
    /// This kvod's proposals whose outcome is not told yet, by id
    /// (``ChangeContext/proposal``): the revision the watch applied one at
    /// (0: not seen yet), which tells whether a `Txn` whose answer was lost
    /// was applied (EtcdReplica+Txn).
    var unsettled: [UInt64: Int64] = [:]
    /// Told how long each proposal took from ``commit(_:comparing:_:proposal:answered:_:)``
    /// to its outcome, in nanoseconds (the daemon's `kvod_cluster_commit_duration_seconds`).
    public var commitTimed: ((ProposalOutcome, _ nanoseconds: UInt64) -> Void)?
    /// One-shot timers running (``pause(_:then:)``), closed with the replica.
    private var pauses: [ObjectIdentifier: any ClusterTimer] = [:]
    /// etcd's request limits, as the cluster is set (``EtcdLimits``).
    public var limits = EtcdLimits()
    /// The newest raft term with a leader known, and the `Txn`s in flight (EtcdReplica+LeaderChange).
    var leaderTerm = LeaderTerm()
    var sendings: [TxnSending] = []
    var leaderTimer: (any ClusterTimer)?
    /// Members asked for their status, not answered yet.
    var statusAsked: Set<String> = []
    /// Pause before watching again after the watch ended.
    static let resumeDelayMilliseconds: UInt64 = 250

    /// Whether reads may be behind etcd: not following, not caught up since the watch attached
    /// again, or behind where etcd was when kvod started.
    public var isStale: Bool { !isFollowing || !isCaughtUp || appliedRevision < startRevision }

    /// Why the replica is stale, for `unavailable` and `info`.
    public var staleness: String {
        guard isFollowing, isCaughtUp, appliedRevision < startRevision else { return lastFailure }
        return "catching up with revision \(startRevision), etcd's when kvod started (applied \(appliedRevision))"
    }

    /// A replica of `engine` at `snapshot`, over `backend`; it starts following with ``start()``.
    /// `leaseTTL`: the seconds a connection's lease lives without renewal (`--etcd-lease-ttl`).
    public init(backend: any ClusterBackend, keys: ClusterKeys, snapshot: ReplicaSnapshot, epoch: ClusterEpoch,
                engine: Engine, leaseTTL: Int64, loop: any ClusterLoop, logger: Logger) {
        client = backend
        self.keys = keys
        self.engine = engine
        self.loop = loop
        self.logger = logger
        self.epoch = epoch
        appliedRevision = snapshot.revision
        modRevisions = snapshot.documents.mapValues { Int64($0.modRevision) }
        _ = leaderTerm.heard(leaderAt: snapshot.raftTerm)
        resumeTimer = loop.makeTimer()
        leases = EtcdLeases(client: client, keys: keys, connectionTTL: leaseTTL, loop: loop, logger: logger)
        releases = LeaseReleases(engine: engine, loop: loop, logger: logger)
        releases.replicator = self
    }

    var endpoints: String { client.endpoints.joined(separator: ",") }

    // MARK: Proposing

    /// Sends `proposal` as one `Txn` guarded by its object's `mod_revision`, its leased keys
    /// beside once their leases are granted (``EtcdLeases``); `done` once its outcome is known here.
    public func propose(_ proposal: ChangeProposal, _ done: @escaping (ProposalOutcome) -> Void) {
        // The revision the proposal was computed at, read now: a change applied while a lease is
        // granted must make the Txn's compare fail, not pass it (two leaders otherwise).
        let object = proposal.change.object
        let compared = modRevisions[object] ?? 0
        // The leases a lifetime needs first; the leased keys' operations join the Txn (EtcdLeases).
        leases.operations(for: BatchLeasePlan(proposal)) { [weak self] result in
            guard let self else { return }
            guard case .success(let leased) = result else {
                if case .failure(let failure) = result { done(.unavailable("\(failure); nothing changed")) }
                return
            }
            var change = proposal.change
            change.context.host = leases.host
            change.context.proposal = newProposalID()
            change.context.expires = leased.expires.first
            let request = txn(comparing: [.modRevision(of: keys.document(object), is: compared)],
                              writes: [ObjectWrite(object: object, document: proposal.document, record: change.json,
                                                   modSeqs: proposal.modSeqs)],
                              besides: leased.operations)
            commit(request, comparing: [object: compared], "this \(proposal.change.op)", proposal: change.context.proposal,
                   answered: { [weak self] in self?.leases.settled(leased, $0) }, done)
        }
    }

    /// The connection `owner` closed: its lease is revoked, and every kvod deletes its ephemeral values.
    public func clientClosed(_ owner: Int) {
        leases.clientClosed(owner)
    }

    /// A new id for a proposal's records, unique among this kvod's unsettled ones.
    func newProposalID() -> UInt64 {
        var id = UInt64.random(in: 1...UInt64.max)
        while unsettled[id] != nil { id = UInt64.random(in: 1...UInt64.max) }
        return id
    }

    /// Notes that the watch applied the records of `proposal` at `revision`, if it is this kvod's and unsettled.
    func noteApplied(_ proposal: UInt64?, at revision: Int64) {
        guard let proposal, unsettled[proposal] == 0 else { return }
        unsettled[proposal] = revision
    }

    /// The revision the watch applied `proposal`'s records at; nil: not yet (or no proposal).
    func appliedRevision(of proposal: UInt64?) -> Int64? {
        guard let proposal, let revision = unsettled[proposal], revision > 0 else { return nil }
        return revision
    }

    /// Runs `body` on the loop after `milliseconds`, unless the replica is closed first.
    func pause(_ milliseconds: UInt64, then body: @escaping () -> Void) {
        let timer = loop.makeTimer()
        let key = ObjectIdentifier(timer)
        pauses[key] = timer
        timer.start(afterMilliseconds: milliseconds) { [weak self] in
            self?.pauses.removeValue(forKey: key)?.close()
            body()
        }
    }

    func wait(until isDue: @escaping () -> Bool, then outcome: ProposalOutcome,
              _ done: @escaping (ProposalOutcome) -> Void) {
        if isDue() { return done(outcome) }
        waiting.append((isDue, outcome, done))
    }

    /// Tells the proposals the replica has caught up with.
    func releaseWaiting() {
        guard !waiting.isEmpty else { return }
        let due = waiting.filter { $0.isDue() }
        waiting.removeAll { $0.isDue() }
        for entry in due { entry.done(entry.outcome) }
    }

    // MARK: Following

    /// Watches the prefix from the revision after the last one applied.
    public func start() {
        // Cancelled first, so that dropping what waits does not unpause a transfer about to go.
        watch?.cancel()
        // The new watch delivers again whatever was not applied yet.
        dropUnapplied()
        watchGeneration += 1
        let request = EtcdWatchRequest(.prefix(keys.prefix), startRevision: appliedRevision + 1, prevKV: false)
        watch = client.watch(request) { [weak self] update in self?.handle(update) }
    }

    /// The endpoint of the watch in place, if one is.
    var watchEndpoint: String? { watch?.endpoint }

    private func handle(_ update: EtcdWatchUpdate) {
        progress.heard(update)
        switch update {
        case .created:
            logger.notice("following etcd (\(endpoints)) from revision \(appliedRevision + 1)")
            isFollowing = true
            if !isCaughtUp {
                lastFailure = "the watch at \(watchEndpoint ?? "etcd") is in place again; not caught up with etcd yet"
                confirmCaughtUp()
            }
        case .events(_, let events):
            applyInSlices(events)
        case .progress:
            break
        case .compacted(let compactRevision):
            stopFollowing("revisions up to \(compactRevision) were compacted; reading the prefix again")
            resync()
        case .cancelled(let reason):
            stopFollowing("etcd cancelled the watch: \(reason)")
            resumeLater()
        case .ended(let error):
            stopFollowing("\(error)")
            resumeLater()
        }
    }

    /// Ends the watch in place (the liveness check found it stalled).
    func cancelWatch() {
        watch?.cancel()
        watch = nil
    }

    func stopFollowing(_ reason: String) {
        watch = nil
        if isFollowing || reason != lastFailure {
            logger.warning("not following etcd (\(endpoints)): \(reason); changes get unavailable, reads are stale")
        }
        isFollowing = false
        isCaughtUp = false
        catchUpTarget = nil
        lastFailure = reason
    }

    func resumeLater() {
        resumeTimer?.start(afterMilliseconds: Self.resumeDelayMilliseconds) { [weak self] in self?.start() }
    }

    /// Applies one revision's changes: each object's document with the record
    /// put beside it (none: a whole-document change made without kvod).
    func apply(revision: Int64, _ events: ArraySlice<EtcdWatchEvent>) {
        let writes = RevisionWrites(events, keys: keys)
        for key in writes.unreadable { logger.error("etcd key \(key) at revision \(revision) is not a JSON object; ignored") }
        if applyBatch(revision: revision, writes) {
            releases.follow(events, keys: keys, recordedObjects: [], releasing: false)
            appliedRevision = max(appliedRevision, revision)
            return
        }
        var records: [String: ReplicatedChange] = [:]
        var modSeqs: [String: ModSeqTree] = [:]
        for (object, json) in writes.records {
            guard let change = ReplicatedChange(object: object, json: json) else { continue }
            records[object] = change
            noteApplied(change.context.proposal, at: revision)
            modSeqs[object] = ReplicatedModSeqs.tree(inRecord: json, revision: UInt64(revision))
        }
        for event in events where event.kv.key.elementsEqual(keys.epoch.utf8) { followEpoch(event) }
        for (object, document) in writes.documents {
            let change = records[object] ?? ReplicatedChange(op: "external", object: object, path: [], kind: .setting)
            engine.applyReplicated(change, document: document, seq: UInt64(revision))
            engine.adoptReplicatedModSeqs(object, modSeqs[object], revision: UInt64(revision))
            modRevisions[object] = document == nil ? nil : revision
        }
        releases.follow(events, keys: keys, recordedObjects: Set(records.keys))
        appliedRevision = max(appliedRevision, revision)
    }

    /// After a compaction: reads the prefix, brings the replica to it, and watches from there.
    private func resync() {
        client.range(ReplicaSnapshot.request(keys)) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let response):
                let snapshot = ReplicaSnapshot(response, keys: keys)
                engine.resyncReplica(documents: snapshot.documents.mapValues(\.document),
                                     revision: UInt64(snapshot.revision), modSeqs: snapshot.modSeqs)
                restoreLeases(snapshot, engine: engine, keys: keys)
                modRevisions = snapshot.documents.mapValues { Int64($0.modRevision) }
                appliedRevision = snapshot.revision
                heardLeader(at: snapshot.raftTerm)
                releaseWaiting()
                readEpochAgain()
                start()
            case .failure(let error):
                lastFailure = "\(error)"
                resumeTimer?.start(afterMilliseconds: Self.resumeDelayMilliseconds) { [weak self] in self?.resync() }
            }
        }
    }

    /// Stops following and closes the loop handles: the daemon is stopping.
    public func close() {
        watch?.cancel()
        watch = nil
        for timer in [livenessTimer, leaderTimer, resumeTimer, sliceTimer] { timer?.close() }
        (livenessTimer, leaderTimer, resumeTimer, sliceTimer) = (nil, nil, nil, nil)
        for timer in pauses.values { timer.close() }
        pauses = [:]
        leases.close()
        releases.close()
    }
}
