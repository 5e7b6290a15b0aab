import KVOEngine
import KVOEtcd
import KVOValues

/// Sending a proposal's `Txn`, a single change's or a batch's: checked
/// against etcd's limits first, then told once the replica can tell its
/// outcome (docs/CLUSTER.md).
extension EtcdReplica {
    /// Sends `txn`, guarded by the `mod_revision`s in `compared` (by object),
    /// which the replica read the proposal at; `what` names the request in a
    /// refusal (`this set`). Committed: `done` once the replica has applied
    /// its revision. Lost compare: `done(.conflict)` once the replica has the
    /// newer change (every revision up to the one etcd compared at, or a
    /// compared object's newer revision), so the retry is computed against it.
    /// `answered` is told etcd's answer first (nil: none, the Txn was not
    /// applied), and not at all when kvod cannot tell whether it was.
    ///
    /// `proposal`: the id the `Txn`'s records carry (``ChangeContext/proposal``).
    /// When etcd's answer is lost after the `Txn` was sent (docs/CLUSTER.md,
    /// "When etcd's answer is lost"), the same `Txn` is sent again, at most
    /// ``maxResends`` times: its compares let at most one of the two apply, and
    /// a resend that loses its compare is told apart from a lost race by the
    /// id, which the watch finds in the revision that applied the first.
    func commit(_ txn: EtcdTxnRequest, comparing compared: [String: Int64], _ what: String, proposal: UInt64? = nil,
                answered: @escaping (EtcdTxnResponse?) -> Void = { _ in }, _ reportOutcome: @escaping (ProposalOutcome) -> Void) {
        let started = loop.nanoseconds
        let done = { [weak self] (outcome: ProposalOutcome) in
            if let self { commitTimed?(outcome, loop.nanoseconds &- started) }
            reportOutcome(outcome)
        }
        guard !isStale else {
            answered(nil)
            return done(.unavailable("this kvod is not following etcd (\(endpoints)): \(staleness); nothing changed"))
        }
        if let refusal = limits.refusal(of: txn, what) {
            answered(nil)
            return done(.refused(refusal))
        }
        // Only a Txn that writes a record can be found again by its id.
        let proposal = txn.success.isEmpty ? nil : proposal
        if let proposal { unsettled[proposal] = 0 }
        send(txn, comparing: compared, proposal: proposal, lost: nil, resends: 0, answered: answered) { [weak self] in
            if let proposal { self?.unsettled[proposal] = nil }
            done($0)
        }
    }

    /// How many times a `Txn` whose answer was lost is sent again before the
    /// client is told that its change may have been applied.
    static let maxResends = 3

    /// One sending of `txn`; `lost`: the failure of an earlier sending that
    /// may have applied it (nil: none did).
    private func send(_ txn: EtcdTxnRequest, comparing compared: [String: Int64], proposal: UInt64?, lost: EtcdError?,
                      resends: Int, answered: @escaping (EtcdTxnResponse?) -> Void,
                      _ done: @escaping (ProposalOutcome) -> Void) {
        let sending = TxnSending(term: leaderTerm.term)
        sending.request = client.txn(txn, idempotent: false) { [weak self] result in
            guard let self else { return }
            if case .success(let response) = result { heardLeader(at: response.header.raftTerm) }
            switch result {
            case .success(let response) where response.succeeded:
                answered(response)
                // Compares alone (a batch that changes nothing) make no revision.
                guard !txn.success.isEmpty else { return done(.applied(seq: UInt64(appliedRevision))) }
                let revision = response.header.revision
                progress.committed(at: revision)
                wait(until: { [unowned self] in appliedRevision >= revision },
                     then: .applied(seq: UInt64(revision)), done)
            case .success(let response):
                let revision = response.header.revision
                wait(until: { [unowned self] in
                    appliedRevision >= revision || compared.contains { (modRevisions[$0.key] ?? 0) != $0.value }
                }, then: .conflict) { [weak self] outcome in
                    // A resend loses its compare to the first sending when that one was applied after all; so
                    // may a first sending to an earlier copy of itself (libcurl sends a request again by itself
                    // when a reused connection fails before any byte of the answer).
                    if let self, let seen = appliedRevision(of: proposal) {
                        logger.notice("a Txn sent again lost its compare to an earlier sending, applied at revision \(seen)")
                        return done(.applied(seq: UInt64(seen)))
                    }
                    answered(response)
                    done(outcome)
                }
            case .failure(let error):
                let lost = error.mayHaveBeenApplied ? error : lost
                guard let lost, proposal != nil else {
                    answered(nil)
                    return done(.unavailable("etcd (\(endpoints)) did not commit the change: \(error); nothing changed"))
                }
                logger.notice("etcd's answer to a Txn was lost (\(error)); finding out whether it was applied")
                // One abandoned for a new leader goes again at once: that leader is there now.
                resendLater(txn, comparing: compared, proposal: proposal, lost: lost, resends: resends,
                            after: sending.isAbandoned ? 0 : Self.resumeDelayMilliseconds, answered: answered, done)
            }
        }
        track(sending)
    }

    /// After a sending whose answer was lost: the outcome the watch already
    /// found (the id in an applied revision), or the same `Txn` sent again
    /// after a pause, or, past ``maxResends``, `unknown`.
    private func resendLater(_ txn: EtcdTxnRequest, comparing compared: [String: Int64], proposal: UInt64?,
                             lost: EtcdError, resends: Int, after milliseconds: UInt64,
                             answered: @escaping (EtcdTxnResponse?) -> Void,
                             _ done: @escaping (ProposalOutcome) -> Void) {
        pause(milliseconds) { [weak self] in
            guard let self else { return }
            if let seen = appliedRevision(of: proposal) {
                logger.notice("the Txn whose answer was lost was applied at revision \(seen)")
                return done(.applied(seq: UInt64(seen)))
            }
            guard resends < Self.maxResends else {
                logger.warning("etcd (\(endpoints)) did not tell whether a Txn was applied: \(lost)")
                return done(.unknown("etcd (\(endpoints)) did not tell whether the change was committed: \(lost); "
                    + "it may have been applied: read it to find out"))
            }
            logger.notice("the Txn whose answer was lost is not applied so far; sending it again (\(resends + 1) of \(Self.maxResends))")
            send(txn, comparing: compared, proposal: proposal, lost: lost, resends: resends + 1, answered: answered, done)
        }
    }

    /// The `Txn` operation that leaves `object` with `document` (nil: deletes it).
    func documentOp(_ object: String, _ document: JSONObject?) -> EtcdRequestOp {
        if let document {
            .put(EtcdPutRequest(key: Array(keys.document(object).utf8), value: JSONValue.object(document).jsonBytes))
        } else {
            .delete(EtcdDeleteRequest(.key(keys.document(object))))
        }
    }
}
