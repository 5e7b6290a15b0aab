import KVOEtcd

/// A watch response's changes applied a slice per loop turn (issue 33: no
/// turn over 50 ms). A watch that catches up gets up to 1,000 revisions in
/// one response (etcd's `watchBatchMaxRevs`), and since group commit a
/// revision may carry a hundred changes: applied at once, a catch-up held
/// every client of this kvod for seconds. Each slice applies whole
/// revisions, at least one, until ``eventsPerSlice`` events are applied; the
/// rest wait in order, and a later response queues behind them. Until they
/// are applied, the replica is behind and says so (`stale`), as it would be
/// had they not arrived yet.
extension EtcdReplica {
    /// Watch events applied in one slice at most, unless one revision has more.
    /// 512: applying a change costs a kvod about 27 µs on the shared 2-core
    /// machine under the cluster benchmark (docs/PERFORMANCE.md), some 14 ms a slice.
    static let eventsPerSlice = 512

    /// Queues a watch response's events and applies a first slice now.
    func applyInSlices(_ events: [EtcdWatchEvent]) {
        guard !events.isEmpty else { return }
        let wasIdle = unappliedStart == unapplied.count
        unapplied.append(contentsOf: events)
        if wasIdle { applySlice() }
    }

    /// Applies the oldest unapplied revisions, whole, while the slice lasts,
    /// and arms the next slice if any remain.
    func applySlice() {
        var budget = Self.eventsPerSlice
        var start = unappliedStart
        // A new watch started meanwhile (nothing applied here starts one, but if it did) owns the queue.
        let generation = watchGeneration
        while start < unapplied.count, budget > 0 {
            let revision = unapplied[start].kv.modRevision
            let end = unapplied[start...].firstIndex { $0.kv.modRevision != revision } ?? unapplied.endIndex
            apply(revision: revision, unapplied[start..<end])
            guard watchGeneration == generation else { return }
            budget -= end - start
            start = end
        }
        largestSlice = max(largestSlice, start - unappliedStart)
        if start == unapplied.count {
            dropUnapplied()
        } else {
            unappliedStart = start
            armNextSlice()
        }
        noteCaughtUpIfSo()
        releaseWaiting()
    }

    /// Forgets the events not applied yet: a new watch delivers them again
    /// from the revision after the last one applied.
    func dropUnapplied() {
        unapplied.removeAll(keepingCapacity: false)
        unappliedStart = 0
        sliceTimer?.stop()
    }

    /// 1 ms, not 0: libuv runs a zero-delay timer restarted from its own
    /// callback again before polling, which would serve no other client
    /// between two slices.
    private func armNextSlice() {
        let timer = sliceTimer ?? UVTimer(loop: loop)
        sliceTimer = timer
        timer.start(afterMilliseconds: 1) { [weak self] in self?.applySlice() }
    }
}
