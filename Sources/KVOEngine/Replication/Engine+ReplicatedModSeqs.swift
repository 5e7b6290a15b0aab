import KVOValues

/// modSeqs over a replicated store (docs/CLUSTER.md, "modSeqs over etcd"):
/// each change's record carries its object's tree after it, and every kvod
/// takes that tree for the object, whether it applied the change or loaded
/// the store, so a key path has one modSeq on every kvod and across restarts.
extension Engine {
    /// The tree `change` (computed against the replica, not applied) leaves
    /// its object with, to store beside it; nil when it deletes the object.
    func proposedModSeqs(after change: ChangeRecord, document: JSONObject?) -> ProposedModSeqs? {
        guard document != nil else { return nil }
        var tree = store.modSeqs(change.object)
        if tree == nil || change.createdObject || change.path.isEmpty { tree = ModSeqTree(madeAt: change.seq) }
        tree?.record(change)
        return tree.map { ProposedModSeqs(tree: $0, base: store.seq) }
    }

    /// Gives `object` (when it has a document) the modSeqs its record at
    /// `revision` stored; nil (a record without them, or none): the whole
    /// document counts as changed at `revision`, as a kvod loading the store
    /// then counts it.
    public func adoptReplicatedModSeqs(_ object: String, _ tree: ModSeqTree?, revision: UInt64) {
        guard let entry = store.objects.entry(object), entry.members != nil else { return }
        entry.modSeqs = tree ?? ModSeqTree(madeAt: revision)
    }
}
