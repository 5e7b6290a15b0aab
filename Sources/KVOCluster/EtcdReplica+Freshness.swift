import KVOEtcd

/// No window where a watch attached again reads as fresh (issue 35 item 5). A
/// member that was stopped or cut off takes the watch at once, before it has
/// the changes the cluster made meanwhile: its kvod read the old values
/// without `stale` until they came. So once a watch attaches after the
/// replica stopped following, or a probe finds its member between leaders,
/// the replica is behind until a linearizable read of the watch's member
/// (answered only with a leader, once that member applied what the leader
/// committed) names the prefix's last change and the watch has applied it.
/// Meanwhile reads say `stale` and changes get `unavailable` with nothing
/// changed, as while no watch is in place.
extension EtcdReplica {
    /// Asks the watch's member for the revision of the prefix's last change,
    /// again every ``resumeDelayMilliseconds`` while the member answers without
    /// one (no leader yet); one that does not answer is left for the next endpoint.
    func confirmCaughtUp() {
        let generation = watchGeneration
        guard let endpoint = watchEndpoint, isFollowing, !isCaughtUp, confirmingGeneration != generation else { return }
        confirmingGeneration = generation
        let newest = EtcdRangeRequest(.prefix(keys.prefix), limit: 1, keysOnly: true, newestFirst: true)
        client.probe(newest, at: endpoint, timeoutMilliseconds: WatchLiveness.probeTimeoutMilliseconds) { [weak self] result in
            guard let self else { return }
            if confirmingGeneration == generation { confirmingGeneration = nil }
            // An answer about an earlier watch says nothing of this one.
            guard generation == watchGeneration, watch != nil, isFollowing, !isCaughtUp else { return }
            switch result {
            case .success(let response):
                progress.heard(revision: response.header.revision)
                catchUpTarget = response.kvs.first?.modRevision ?? 0
                noteCaughtUpIfSo()
                heardLeader(at: response.header.raftTerm)
            case .failure(let error) where error.isRefusal:
                lastFailure = "etcd at \(endpoint) cannot tell whether this kvod is caught up: \(error)"
                pause(Self.resumeDelayMilliseconds) { [weak self] in self?.confirmCaughtUp() }
            case .failure(let error):
                abandon(endpoint, because: "etcd at \(endpoint) did not answer a read within "
                    + "\(WatchLiveness.probeTimeoutMilliseconds) ms after the watch attached (\(error))")
            }
        }
    }

    /// The watch stays, but the replica is behind until a read confirms it is
    /// not (its member answered a probe between leaders, say).
    func fallBehind(_ reason: String) {
        if isCaughtUp {
            logger.warning("etcd (\(endpoints)): \(reason); reads are stale and changes unavailable until caught up")
        }
        isCaughtUp = false
        catchUpTarget = nil
        lastFailure = reason
        confirmCaughtUp()
    }

    /// The replica is caught up once the watch has applied the target a read told.
    func noteCaughtUpIfSo() {
        guard !isCaughtUp, let target = catchUpTarget, appliedRevision >= target else { return }
        isCaughtUp = true
        catchUpTarget = nil
        logger.notice("caught up with etcd at revision \(appliedRevision); reads are fresh again")
    }
}

extension EtcdError {
    /// Whether etcd answered, refusing: the member is there (between leaders, say), unlike a request that timed out.
    var isRefusal: Bool {
        if case .server = self { true } else { false }
    }
}
