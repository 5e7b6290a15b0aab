import KVOEtcd

/// Writes resume within 2 s of a new etcd leader (issue 35 item 5). A member
/// forwards a `Txn` to its leader; if that leader dies, the proposal dies
/// with it, and the member answers only when etcd's request timeout (7 s)
/// passes, kvod's own (5 s) first: writes stalled 5.0-5.7 s while etcd
/// elected another leader in about a second. So kvod keeps the newest raft
/// term in which it knows etcd had a leader, and a `Txn` still in flight once
/// a newer term's leader is known is abandoned and resolved as any `Txn` whose
/// answer was lost (EtcdReplica+Txn): it may still be applied (the new leader
/// may hold it in its log), so the same `Txn` goes again at once, its
/// compares letting at most one of the two apply and its id telling which.
struct LeaderTerm {
    /// The newest raft term in which etcd had a leader, as far as kvod knows
    /// (0: none known yet): from every `Txn` answered and every linearizable
    /// read (both need a leader), and every status that names a leader.
    private(set) var term: UInt64 = 0

    /// A leader is known at `term`: whether that is a newer term.
    mutating func heard(leaderAt term: UInt64) -> Bool {
        guard term > self.term else { return false }
        self.term = term
        return true
    }
}

/// One sending of a `Txn`, while it is in flight.
final class TxnSending {
    /// The newest leader's term known when it was sent (``LeaderTerm``).
    let term: UInt64
    let sentAt = ContinuousClock.now
    var request: (any ClusterRequest)?
    /// Whether kvod stopped waiting for it because a newer leader is known.
    private(set) var isAbandoned = false

    init(term: UInt64) {
        self.term = term
    }

    var isFinished: Bool { request?.isFinished ?? true }

    func abandon(_ reason: String) {
        isAbandoned = true
        request?.abandon(because: reason)
    }
}

extension EtcdReplica {
    /// How long a `Txn` is in flight before its member is asked for its
    /// leader, and how often then: a `Txn` lost with a dead leader is known
    /// so within this much of the member knowing its new leader.
    static let slowTxnMilliseconds: UInt64 = 250
    /// How long a member may take to say its status.
    static let statusTimeoutMilliseconds = 1_000

    /// Follows `sending` until it is answered (see ``LeaderTerm``).
    func track(_ sending: TxnSending) {
        guard !sending.isFinished else { return }
        sendings.append(sending)
        guard leaderTimer == nil else { return }
        let timer = loop.makeTimer()
        leaderTimer = timer
        timer.start(afterMilliseconds: Self.slowTxnMilliseconds, repeatMilliseconds: Self.slowTxnMilliseconds) { [weak self] in
            self?.askAboutSlowTxns()
        }
    }

    /// etcd had a leader at `term` (an answer that needed one said so): the
    /// `Txn`s sent before kvod knew of that term are abandoned, to be sent again.
    func heardLeader(at term: UInt64) {
        guard leaderTerm.heard(leaderAt: term) else { return }
        // A read that could not tell for want of a leader can now.
        if !isCaughtUp { confirmCaughtUp() }
        sendings.removeAll(where: \.isFinished)
        let stranded = sendings.filter { $0.term != 0 && $0.term < term }
        guard !stranded.isEmpty else { return }
        logger.notice("""
            etcd has a leader at raft term \(term): \(stranded.count) Txn(s) sent before it may be lost with the \
            leader before; sending them again
            """)
        for sending in stranded { sending.abandon("etcd has a new leader (raft term \(term))") }
    }

    /// Asks the member of each `Txn` in flight for longer than
    /// ``slowTxnMilliseconds`` which leader it knows, once at a time.
    private func askAboutSlowTxns() {
        sendings.removeAll(where: \.isFinished)
        guard !sendings.isEmpty else {
            leaderTimer?.close()
            leaderTimer = nil
            return
        }
        let slow = ContinuousClock.now - .milliseconds(Self.slowTxnMilliseconds)
        let endpoints = Set(sendings.filter { $0.sentAt <= slow }.compactMap { $0.request?.endpoint })
        for endpoint in endpoints.subtracting(statusAsked) {
            statusAsked.insert(endpoint)
            client.status(of: endpoint, timeoutMilliseconds: Self.statusTimeoutMilliseconds) { [weak self] result in
                guard let self else { return }
                statusAsked.remove(endpoint)
                // A member that does not answer is the liveness probe's to find (EtcdReplica+Liveness).
                guard case .success(let status) = result, status.leader != 0 else { return }
                heardLeader(at: status.raftTerm)
            }
        }
    }
}
