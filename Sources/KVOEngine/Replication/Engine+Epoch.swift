/// Over etcd the epoch is the cluster's (docs/CLUSTER.md): it changes while
/// kvod runs when the cluster's epoch key is replaced (after a restore from
/// backup, or the key deleted).
extension Engine {
    /// Takes `epoch` as the history's new name and forgets the history held:
    /// its seqs counted another history, so a resume point of the old epoch is
    /// `compacted`, and one of the new epoch starts after the current seq.
    public func adoptEpoch(_ epoch: String) {
        guard epoch != self.epoch else { return }
        self.epoch = epoch
        history.start(after: store.seq)
    }
}
