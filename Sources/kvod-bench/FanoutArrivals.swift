/// When each change reached the first and the last observer on each host:
/// the spread between them is how long one host took to fan the change out
/// to its observers, whatever the change's way to that host cost. Kept by the
/// observers' thread only, and read after it ended.
final class FanoutArrivals {
    /// How many observers each host has: a change counts once all of them got it.
    private let observers: [Int]
    private var first: [[UInt64]]
    private var last: [[UInt64]]
    private var counts: [[Int32]]

    init(observersPerHost: [Int]) {
        observers = observersPerHost
        first = observersPerHost.map { _ in [] }
        last = observersPerHost.map { _ in [] }
        counts = observersPerHost.map { _ in [] }
    }

    func record(host: Int, change: Int, at time: UInt64) {
        while counts[host].count <= change {
            first[host].append(.max)
            last[host].append(0)
            counts[host].append(0)
        }
        first[host][change] = min(first[host][change], time)
        last[host][change] = max(last[host][change], time)
        counts[host][change] += 1
    }

    /// Last minus first arrival, per host and change that every one of the host's observers got.
    func spreads() -> Histogram {
        let histogram = Histogram()
        for host in observers.indices where observers[host] > 0 {
            for change in counts[host].indices where counts[host][change] == observers[host] {
                histogram.record(last[host][change] - first[host][change])
            }
        }
        return histogram
    }
}
