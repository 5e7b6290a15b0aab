import Prometheus

/// A Prometheus counter that follows a running total kept elsewhere (the
/// engine's plain counts): when scraped it is increased by what the total
/// grew since, so the hot path pays one integer increment, not a metric call.
struct MirroredCounter {
    let counter: Counter
    private var reported = 0

    init(_ counter: Counter) {
        self.counter = counter
    }

    /// Brings the counter up to `total`.
    mutating func follow(_ total: Int) {
        guard total > reported else { return }
        counter.increment(by: Int64(total - reported))
        reported = total
    }
}
