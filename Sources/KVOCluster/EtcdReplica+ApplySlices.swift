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
///
/// What waits is bounded in bytes (``watchBufferBytes``): the watch is read
/// between slices, and a catch-up arrives faster than slices apply it. Past
/// the bound the watch's stream is left unread, so etcd holds the rest (as
/// for any slow watcher), until the slices have brought the queue down to
/// half the bound. Both bounds hold: no turn applies more than a slice, and
/// what waits is the bound plus what one read of the stream brought.
extension EtcdReplica {
    /// Watch events applied in one slice at most, unless one revision has more:
    /// well within a turn's bound at the cluster benchmark's cost per applied
    /// change (docs/PERFORMANCE.md).
    static let eventsPerSlice = 512

    /// Keys' and values' bytes (and 64 an event) waiting before the watch is paused.
    public static let defaultWatchBufferBytes = 16 << 20

    /// Queues a watch response's events and applies a first slice now.
    func applyInSlices(_ events: [EtcdWatchEvent]) {
        guard !events.isEmpty else { return }
        let wasIdle = unappliedStart == unapplied.count
        unapplied.append(contentsOf: events)
        unappliedBytes += events.reduce(0) { $0 + Self.bytes(of: $1) }
        if wasIdle { applySlice() }
        if unappliedBytes > watchBufferBytes, let watch, !watch.isPaused {
            watch.pauseReceiving()
            watchPauses += 1
        }
    }

    private static func bytes(of event: EtcdWatchEvent) -> Int {
        event.kv.key.count + event.kv.value.count + 64
    }

    /// Applies the oldest unapplied revisions, whole, while the slice lasts,
    /// and arms the next slice if any remain. Returns how many events it applied.
    @discardableResult
    func applySlice() -> Int {
        var budget = Self.eventsPerSlice
        let first = unappliedStart
        var start = first
        // A new watch started meanwhile (nothing applied here starts one, but if it did) owns the queue.
        let generation = watchGeneration
        while start < unapplied.count, budget > 0 {
            let revision = unapplied[start].kv.modRevision
            let end = unapplied[start...].firstIndex { $0.kv.modRevision != revision } ?? unapplied.endIndex
            apply(revision: revision, unapplied[start..<end])
            guard watchGeneration == generation else { return end - first }
            unappliedBytes -= unapplied[start..<end].reduce(0) { $0 + Self.bytes(of: $1) }
            budget -= end - start
            start = end
        }
        let applied = start - first
        largestSlice = max(largestSlice, applied)
        if start == unapplied.count {
            dropUnapplied()
        } else {
            // What was applied goes once it is half the queue: a queue that keeps
            // filling never empties, and would keep every event it ever held.
            if start * 2 >= unapplied.count {
                unapplied.removeFirst(start)
                start = 0
            }
            unappliedStart = start
            armNextSlice()
        }
        if let watch, watch.isPaused, unappliedBytes <= watchBufferBytes / 2 { watch.resumeReceiving() }
        noteCaughtUpIfSo()
        releaseWaiting()
        return applied
    }

    /// Forgets the events not applied yet: a new watch delivers them again
    /// from the revision after the last one applied.
    func dropUnapplied() {
        unapplied.removeAll(keepingCapacity: false)
        unappliedStart = 0
        unappliedBytes = 0
        sliceTimer?.stop()
        // A watch is left unread only while events wait for their slices.
        watch?.resumeReceiving()
    }

    /// 1 ms, not 0: libuv runs a zero-delay timer restarted from its own
    /// callback again before polling, which would serve no other client
    /// between two slices.
    private func armNextSlice() {
        let timer = sliceTimer ?? loop.makeTimer()
        sliceTimer = timer
        timer.start(afterMilliseconds: 1) { [weak self] in self?.applySlice() }
    }
}
