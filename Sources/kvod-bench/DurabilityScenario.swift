/// The durability scenario (issue 7): set-throughput's load against servers
/// that keep their data on disk, each pair of kvod `--sync` mode and Redis
/// `appendfsync` setting that promise the same (``Persistence``), and the
/// same pair in memory as the base that durability's cost is read against.
extension Scenario {
    /// One setter connection per key, an observer of every key (as in
    /// set-throughput), in `shape`; with a pipelined shape, a lone client's
    /// ping times while the setters write flat out as well.
    static func durability(_ server: ServerProcess, _ sizes: Sizes, _ persistence: Persistence,
                           _ shape: SetShape) throws(BenchError) -> ScenarioResult {
        let pinged = shape.pipeline > 1
        let outcome = try sets(server, sizes, shape, seconds: sizes.durabilitySeconds, bystander: pinged)
        var figures = [Figure(row: durabilityRow(persistence, shape), unit: "sets/s", higherIsBetter: true,
                              value: outcome.setsPerSecond)]
        var notes: [String] = []
        if pinged, let pings = outcome.pings {
            if pings.total == 0 {
                notes.append("the bystander got no reply to a ping during the measurement")
            } else {
                for (label, fraction) in [("p50", 0.5), ("p99", 0.99)] {
                    figures.append(Figure(row: durabilityRow(persistence, shape, ping: label), unit: "µs",
                                          higherIsBetter: false, value: Double(pings.percentile(fraction)) / 1000))
                }
            }
        }
        return ScenarioResult(figures: figures, problems: outcome.problems, notes: notes)
    }

    /// The table row of a durability figure: sets per second, or with `ping`
    /// (`p50`, `p99`) the bystander's ping time.
    static func durabilityRow(_ persistence: Persistence, _ shape: SetShape, ping: String? = nil) -> String {
        let load = "\(persistence.pairName), \(shape.description), 1 observer"
        guard let ping else { return load }
        return load + ": a lone client's ping, \(ping)"
    }
}
