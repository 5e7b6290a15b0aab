/// Ephemeral values and `ttl` over a replicated store (docs/CLUSTER.md):
/// the store holds a leased key per leased value; the engine says what a
/// change does to them, tracks which values are leased from the records it
/// applies (as local mode does, without owners or deadlines: the store's
/// leases end them), and turns a leased key's end into the value's deletion.
extension Engine {
    /// `proposal` for `request` from `client`, with who makes it and what it
    /// does to leased values.
    func withContext(_ proposal: ChangeProposal, of request: Request, from client: ClientController) -> ChangeProposal {
        var proposal = proposal
        proposal.change.context.uid = client.credentials?.uid
        if request.lifetime != nil {
            proposal.change.context.lifetime = request.lifetime
            proposal.lifetimes.lifetime = request.lifetime
            proposal.lifetimes.owner = client.id
        }
        proposal.lifetimes.endsLeases = endsLeases(proposal.change)
        return proposal
    }

    /// Whether `change` ends leases: a setting (set, delete) in an object
    /// that holds some (local mode's ``updateLeases(for:in:)`` rule).
    private func endsLeases(_ change: ReplicatedChange) -> Bool {
        change.kind == .setting && holdsLeases(in: change.object)
    }

    /// Whether some value of `object` is leased (ephemeral, ttl).
    public func holdsLeases(in object: String) -> Bool { leaseTable.holdsLeases(in: object) }

    /// The lease a replicated change puts on its value, at `seq`: no owner
    /// here, and a deadline that is only told (`expiresIn`): the store's lease
    /// ends the value, on every kvod alike. The deadline is the record's
    /// (the granting kvod's), else the ttl from now (an older kvod's record).
    func replicatedLease(of change: ReplicatedChange, at seq: UInt64) -> Lease? {
        guard let lifetime = change.context.lifetime, change.kind == .setting else { return nil }
        let deadline = lifetime.ttl.map { change.context.expires ?? configuration.wallClock() + $0 }
        return Lease(owner: nil, ephemeral: lifetime.ephemeral, deadline: deadline, replicatedAt: seq)
    }

    /// The deletion of `path` in `object` with `cause`, because the store's
    /// lease on it ended (its owner's connection closed or its kvod died, or
    /// its ttl passed); nil when the value is no longer the one leased at
    /// `grantedAt` (a later set or delete ended that lease, or another kvod
    /// already deleted it). Proposed as any change: computed against the
    /// replica, committed or retried.
    public func releaseProposal(object: String, path: [String], cause: ChangeCause,
                                grantedAt: UInt64) -> ChangeProposal? {
        guard leaseTable.lease(of: object, at: path.joined(separator: "."))?.replicatedAt == grantedAt else { return nil }
        let keyPath = releaseTarget(of: object, at: path)
        guard var proposal = try? proposal(for: .delete(object: object, keyPath: keyPath)) else { return nil }
        proposal.change.context.cause = cause
        proposal.lifetimes.endsLeases = true
        return proposal
    }

    /// Marks `path` of `object` leased since the set at `revision`, as the
    /// store's leased keys say when a kvod starts or resyncs (the records of
    /// those sets may be long overwritten), with the deadline they tell
    /// (`expires`, for `expiresIn`). Ignored for a value not there.
    public func restoreReplicatedLease(object: String, path: [String], ephemeral: Bool, at revision: UInt64,
                                       expires: Double? = nil) {
        guard let entry = store.objects.entry(object), entry.members != nil,
              store.value(object, at: path[...]) != nil else { return }
        leaseTable.restoreReplicated(LeaseTable.Place(object: object, keyPath: path.joined(separator: ".")), in: entry,
                                     ephemeral: ephemeral, at: revision, expires: expires)
    }
}
