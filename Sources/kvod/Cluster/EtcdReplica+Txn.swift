import KVOEngine
import KVOEtcd

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
    /// `answered` is told etcd's answer first (nil: none, the Txn was not sent or failed).
    func commit(_ txn: EtcdTxnRequest, comparing compared: [String: Int64], _ what: String,
                answered: @escaping (EtcdTxnResponse?) -> Void = { _ in }, _ done: @escaping (ProposalOutcome) -> Void) {
        guard isFollowing else {
            answered(nil)
            return done(.unavailable("this kvod is not following etcd (\(endpoints)): \(lastFailure); nothing changed"))
        }
        if let refusal = limits.refusal(of: txn, what) {
            answered(nil)
            return done(.refused(refusal))
        }
        client.txn(txn) { [weak self] result in
            guard let self else { return }
            answered(try? result.get())
            switch result {
            case .success(let response) where response.succeeded:
                // Compares alone (a batch that changes nothing) make no revision.
                guard !txn.success.isEmpty else { return done(.applied(seq: UInt64(appliedRevision))) }
                let revision = response.header.revision
                progress.heard(revision: revision)
                wait(until: { [unowned self] in appliedRevision >= revision },
                     then: .applied(seq: UInt64(revision)), done)
            case .success(let response):
                let revision = response.header.revision
                wait(until: { [unowned self] in
                    appliedRevision >= revision || compared.contains { (modRevisions[$0.key] ?? 0) != $0.value }
                }, then: .conflict, done)
            case .failure(let error):
                done(.unavailable("etcd (\(endpoints)) did not commit the change: \(error)"))
            }
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
