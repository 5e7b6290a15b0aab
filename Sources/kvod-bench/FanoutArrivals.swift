/// When each change reached its first and its last observer, read by the
/// clock as each event is parsed: the spread between them is how long the
/// fan-out of one change took once it reached the first observer (the
/// generator's own reading of every observer's socket included, the same for
/// every peer). Kept by the observers' thread only, and read after it ended.
final class FanoutArrivals {
    /// How many observers there are: a change counts once all of them got it.
    private let observers: Int
    private var first: [UInt64] = []
    private var last: [UInt64] = []
    private var counts: [Int32] = []

    init(observers: Int) { self.observers = observers }

    func record(change: Int, at time: UInt64) {
        while counts.count <= change {
            first.append(.max)
            last.append(0)
            counts.append(0)
        }
        first[change] = min(first[change], time)
        last[change] = max(last[change], time)
        counts[change] += 1
    }

    /// Last minus first arrival, per change that every observer got.
    func spreads() -> Histogram {
        let histogram = Histogram()
        for change in counts.indices where counts[change] == observers {
            histogram.record(last[change] - first[change])
        }
        return histogram
    }
}
