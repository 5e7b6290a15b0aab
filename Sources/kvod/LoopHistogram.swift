/// A histogram of durations, by one label or as one series, kept as plain
/// counts on the loop and rendered in Prometheus's text format only when
/// scraped: a value costs a few comparisons and an increment, not a metric
/// call (swift-prometheus's histograms take a lock per value).
/// `kvod_request_duration_seconds`, `kvod_cluster_commit_duration_seconds`
/// and `kvod_loop_turn_duration_seconds` are kept so.
struct LoopHistogram {
    /// The default upper bounds of the buckets, in nanoseconds: 10 µs to 10 s.
    static let durationBounds: [UInt64] = [10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
                                           5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000,
                                           500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000]

    let name: String
    let help: String
    /// The label's name; nil for a histogram of one series without a label.
    let labelName: String?
    let labels: [String]
    /// Upper bounds of the buckets, in nanoseconds, ascending.
    let bounds: [UInt64]
    /// Per label, then per bucket; each label's last slot is past every bound.
    private var counts: [UInt64]
    private var sums: [UInt64]
    private var slots: Int { bounds.count + 1 }

    init(name: String, help: String, labelName: String, labels: [String], bounds: [UInt64] = Self.durationBounds) {
        self.init(name: name, help: help, label: labelName, labels: labels, bounds: bounds)
    }

    /// A histogram of one series, without a label.
    init(name: String, help: String, bounds: [UInt64]) {
        self.init(name: name, help: help, label: nil, labels: [""], bounds: bounds)
    }

    private init(name: String, help: String, label: String?, labels: [String], bounds: [UInt64]) {
        self.name = name
        self.help = help
        labelName = label
        self.labels = labels
        self.bounds = bounds
        counts = [UInt64](repeating: 0, count: labels.count * (bounds.count + 1))
        sums = [UInt64](repeating: 0, count: labels.count)
    }

    /// Notes one value of the label at `labelIndex` (0 without a label) that took `nanoseconds`.
    mutating func record(labelIndex: Int = 0, nanoseconds: UInt64) {
        var bucket = 0
        while bucket < bounds.count && nanoseconds > bounds[bucket] { bucket += 1 }
        counts[labelIndex * slots + bucket] &+= 1
        sums[labelIndex] &+= nanoseconds
    }

    /// How many values the label at `labelIndex` has.
    func count(labelIndex: Int = 0) -> UInt64 {
        counts[(labelIndex * slots)..<((labelIndex + 1) * slots)].reduce(0, &+)
    }

    /// The family in Prometheus's text format: one series per label seen so
    /// far, or the one series (also while empty) without a label.
    func text() -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (labelIndex, label) in labels.enumerated() where labelName == nil || count(labelIndex: labelIndex) > 0 {
            let series = labelName.map { "\($0)=\"\(label)\"" } ?? ""
            let separator = series.isEmpty ? "" : ","
            let braces = series.isEmpty ? "" : "{\(series)}"
            var cumulative: UInt64 = 0
            for bucket in 0..<slots {
                cumulative &+= counts[labelIndex * slots + bucket]
                let bound = bucket < bounds.count ? Self.seconds(bounds[bucket]) : "+Inf"
                text += "\(name)_bucket{\(series)\(separator)le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "\(name)_sum\(braces) \(Self.seconds(sums[labelIndex]))\n"
            text += "\(name)_count\(braces) \(cumulative)\n"
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
