/// What the acknowledged writes of a history tell about when etcd made each
/// revision: a write answered at seq S was committed at some moment between
/// its call and its answer, and revisions are made in order. So revision R
/// was made after the call of every write at a seq ≤ R, and revision R + 1
/// before the answer of every write at a seq > R.
///
/// A kvod answers a `get` from its replica, which may be behind etcd: the
/// answer is etcd's state at the reply's `seq` R (docs/PROTOCOL.md: the value
/// reflects every change up to it), which held from the moment etcd made R
/// until it made R + 1, perhaps before the `get` was sent. So the read is
/// checked at that moment: within [the latest call of a write at a seq ≤ R,
/// the earliest answer of a write at a seq > R, or its own answer if
/// earlier]. A read whose seq lies about its value fits nowhere; one that is
/// merely behind, and says so by its seq, is what kvod documents.
struct RevisionTimeline {
    private let seqs: [Int]
    /// The latest call among the writes at `seqs[...i]`.
    private let latestCall: [Double]
    /// The earliest answer among the writes at `seqs[i...]`.
    private let earliestAnswer: [Double]
    /// The writes sorted by seq, for reports.
    private let writes: [RecordedOperation]

    init(_ operations: [RecordedOperation]) {
        writes = operations.filter { !$0.isRead && $0.seq != nil && $0.returned != nil }.sorted { $0.seq! < $1.seq! }
        seqs = writes.map { $0.seq! }
        var latest: [Double] = []
        for write in writes { latest.append(max(latest.last ?? -.infinity, write.call)) }
        latestCall = latest
        var earliest = Array(repeating: Double.infinity, count: writes.count)
        for index in writes.indices.reversed() {
            earliest[index] = min(index + 1 < writes.count ? earliest[index + 1] : .infinity, writes[index].returned!)
        }
        earliestAnswer = earliest
    }

    /// The first index whose seq is above `seq`.
    private func firstAbove(_ seq: Int) -> Int {
        var low = 0, high = seqs.count
        while low < high {
            let middle = (low + high) / 2
            if seqs[middle] <= seq { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The interval a read that reflects `seq` and was answered at `answered`
    /// is checked in; nil when it is empty (the reply's seq cannot be true).
    func interval(ofReadAt seq: Int, answered: Double, notBefore start: Double) -> (Double, Double)? {
        let above = firstAbove(seq)
        let from = max(start, above > 0 ? latestCall[above - 1] : -.infinity)
        let to = min(answered, above < seqs.count ? earliestAnswer[above] : .infinity)
        return from <= to ? (from, to) : nil
    }

    /// When revision `seq` was made at the latest: before the earliest answer
    /// of a write above it (infinity when none is known).
    func madeBefore(_ seq: Int) -> Double {
        let above = firstAbove(seq)
        return above < seqs.count ? earliestAnswer[above] : .infinity
    }

    /// Pairs of acknowledged writes that etcd ordered against real time: the
    /// one at the higher seq was answered before the other was sent.
    func orderViolations() -> [String] {
        var found: [String] = []
        for index in writes.indices where index + 1 < writes.count && earliestAnswer[index + 1] < writes[index].call {
            guard let later = writes[(index + 1)...].first(where: { $0.returned! < writes[index].call && $0.seq! > seqs[index] })
            else { continue }
            found.append("the write \(later.request) at seq \(later.seq!) was answered before \(writes[index].request) "
                + "was sent, which was applied at the lower seq \(seqs[index])")
            if found.count >= 5 { break }
        }
        return found
    }
}
