/// A histogram of durations by one label, kept as plain counts on the loop
/// and rendered in Prometheus's text format only when scraped: a value costs
/// a few comparisons and an increment, not a metric call (swift-prometheus's
/// histograms take a lock per value). `kvod_request_duration_seconds` and
/// `kvod_cluster_commit_duration_seconds` are kept so.
struct LoopHistogram {
    /// Upper bounds of the buckets, in nanoseconds: 10 µs to 10 s.
    static let bounds: [UInt64] = [10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
                                   5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000,
                                   500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000]
    private static let slots = bounds.count + 1

    let name: String
    let help: String
    let labelName: String
    let labels: [String]
    /// Per label, then per bucket; each label's last slot is past every bound.
    private var counts: [UInt64]
    private var sums: [UInt64]

    init(name: String, help: String, labelName: String, labels: [String]) {
        self.name = name
        self.help = help
        self.labelName = labelName
        self.labels = labels
        counts = [UInt64](repeating: 0, count: labels.count * Self.slots)
        sums = [UInt64](repeating: 0, count: labels.count)
    }

    /// Notes one value of the label at `labelIndex` that took `nanoseconds`.
    mutating func record(labelIndex: Int, nanoseconds: UInt64) {
        var bucket = 0
        while bucket < Self.bounds.count && nanoseconds > Self.bounds[bucket] { bucket += 1 }
        counts[labelIndex * Self.slots + bucket] &+= 1
        sums[labelIndex] &+= nanoseconds
    }

    /// How many values the label at `labelIndex` has.
    func count(labelIndex: Int) -> UInt64 {
        counts[(labelIndex * Self.slots)..<((labelIndex + 1) * Self.slots)].reduce(0, &+)
    }

    /// The family in Prometheus's text format, one series per label seen so far.
    func text() -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (labelIndex, label) in labels.enumerated() where count(labelIndex: labelIndex) > 0 {
            let series = "\(labelName)=\"\(label)\""
            var cumulative: UInt64 = 0
            for bucket in 0..<Self.slots {
                cumulative &+= counts[labelIndex * Self.slots + bucket]
                let bound = bucket < Self.bounds.count ? Self.seconds(Self.bounds[bucket]) : "+Inf"
                text += "\(name)_bucket{\(series),le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "\(name)_sum{\(series)} \(Self.seconds(sums[labelIndex]))\n"
            text += "\(name)_count{\(series)} \(cumulative)\n"
        }
        return text
    }

    /// Nanoseconds as seconds, exactly (no floating-point rounding in a bound's label).
    private static func seconds(_ nanoseconds: UInt64) -> String {
        let whole = nanoseconds / 1_000_000_000, fraction = nanoseconds % 1_000_000_000
        guard fraction > 0 else { return "\(whole).0" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }
}
