import KVOEtcd

/// Never silently stale (issue 35 item 2): a watch whose member stopped (a
/// hung process, a frozen VM) sends nothing and ends never, and TCP keepalive
/// cannot tell, since the member's kernel still answers. So once a second the
/// replica asks the watch's member for a linearizable read with a short
/// deadline: no answer in time, or a watch that has not delivered this kvod's
/// own committed change for a few probes, and the replica stops following
/// (reads say `stale`, changes get `unavailable`) and watches again from the
/// next endpoint.
struct WatchLiveness {
    /// How often the watch's member is asked.
    static let intervalMilliseconds: UInt64 = 1_000
    /// How long it may take to answer.
    static let probeTimeoutMilliseconds = 1_500
    /// How many answers in a row the watch may stay behind without passing
    /// anything new before it counts as stalled.
    static let stalledProbes = 3

    /// Whether a probe is out.
    var probing = false
    /// Answers in a row that found the watch behind, and what it had passed at the first.
    private var behind = 0
    private var passedWhenBehind: Int64 = 0

    /// A probe answered while the watch has passed `passed` and must pass
    /// `revision`: whether the watch counts as stalled.
    mutating func answered(at revision: Int64, passed: Int64) -> Bool {
        guard passed < revision else {
            behind = 0
            return false
        }
        if behind == 0 || passed > passedWhenBehind {
            behind = 1
            passedWhenBehind = passed
            return false
        }
        behind += 1
        return behind >= Self.stalledProbes
    }

    mutating func reset() {
        behind = 0
    }
}

extension EtcdReplica {
    /// Starts asking once a second (``WatchLiveness``).
    public func startLivenessChecks() {
        livenessTimer = loop.makeTimer()
        livenessTimer?.start(afterMilliseconds: WatchLiveness.intervalMilliseconds,
                             repeatMilliseconds: WatchLiveness.intervalMilliseconds) { [weak self] in self?.probe() }
    }

    private func probe() {
        guard !liveness.probing else { return }
        let endpoint = watchEndpoint ?? client.currentEndpoint
        liveness.probing = true
        client.probe(EtcdRangeRequest(.key(keys.epoch)), at: endpoint,
                     timeoutMilliseconds: WatchLiveness.probeTimeoutMilliseconds) { [weak self] result in
            guard let self else { return }
            liveness.probing = false
            switch result {
            case .success(let response):
                heardLeader(at: response.header.raftTerm)
                progress.heard(revision: response.header.revision)
                guard watch != nil, isFollowing else { return }
                // Only this kvod's own commits are sure to be the watch's to deliver.
                if liveness.answered(at: progress.committed, passed: max(appliedRevision, progress.passedRevision)) {
                    abandon(endpoint, because: """
                        the watch at \(endpoint) has not delivered this kvod's change at revision \
                        \(progress.committed)
                        """)
                }
            case .failure(let error) where error.isRefusal && endpoint == watchEndpoint:
                // The member is there, between leaders say: its watch stays, the replica is behind (EtcdReplica+Freshness).
                fallBehind("etcd at \(endpoint) refused a read: \(error)")
            case .failure(let error):
                abandon(endpoint, because: "etcd at \(endpoint) did not answer a read within "
                    + "\(WatchLiveness.probeTimeoutMilliseconds) ms (\(error))")
            }
        }
    }

    /// Stops following through `endpoint` and watches again from the next one.
    func abandon(_ endpoint: String, because reason: String) {
        liveness.reset()
        client.avoid(endpoint)
        guard isFollowing || watch != nil else { return }
        cancelWatch()
        stopFollowing(reason)
        resumeLater()
    }
}
