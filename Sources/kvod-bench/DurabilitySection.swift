/// docs/PERFORMANCE.md's durability section (`kvod-bench:durability`): the
/// durability scenario's figures, and what durability costs each server
/// against its own in-memory figure in the same load and round.
struct DurabilitySection {
    let report: Report
    let sizes: Sizes
    /// The run and machine lines, as the load section has them.
    let header: String

    private static func isDurability(_ family: String) -> Bool { family == Scenario.durabilityFamily }

    var text: String {
        let loads = report.loadAverages(Self.isDurability)
        let directory = ServerProcess.parentDirectory
        return """
        ## Durability beside Redis's AOF

        \(header)
        Load average (1 min) when these measurements started: \(Self.range(loads)).

        Each measurement starts the server on a new directory under `\(directory)` \
        (\(Machine.filesystemType(directory))), which holds kvod's `--data-dir` and Redis's AOF (`--dir`): \
        kvod `--sync always` or `batch` beside `redis-server --appendonly yes --appendfsync always` or \
        `everysec`, and both in memory (no `--data-dir`; `--appendonly no`) as the base; Redis never \
        snapshots (`--save ''`). The load is set-throughput's: each setter connection sets its own key and \
        one observer observes them all (Redis: keyspace events), counted over \
        \(String(format: "%g", sizes.durabilitySeconds)) s after \(String(format: "%g", sizes.warmupSeconds)) s \
        of warm-up. \
        In the pipelined load, a lone client also pings, one request at a time, 2 ms apart: what an \
        unrelated client waits while the setters write flat out. What the modes promise and how kvod \
        commits: [DURABILITY.md](DURABILITY.md).

        ### Figures

        \(report.table(Self.isDurability))

        ### What durability keeps of each server's in-memory throughput

        Per round, a server's sets/s with durability ÷ its own sets/s in memory under the same load; \
        the median of the rounds.

        \(keptTable())

        \(PerformanceDocument.problemsAndNotes(report.problems(Self.isDurability), report.notes(Self.isDurability)))
        """
    }

    /// Per load, each server's durable sets/s ÷ its in-memory sets/s.
    func keptTable() -> String {
        let columns: [(Persistence, Peer)] = [(.batch, .kvod), (.batch, .redis), (.always, .kvod), (.always, .redis)]
        var lines = [
            "| load | " + columns.map { $0.0.name(for: $0.1) }.joined(separator: " | ") + " |",
            "|---|" + String(repeating: "---:|", count: columns.count),
        ]
        for shape in sizes.durabilityShapes {
            let base = Scenario.durabilityRow(.none, shape)
            let cells = columns.map { persistence, peer in
                report.ratio(Scenario.durabilityRow(persistence, shape), peer, over: base, peer)
                    .map { String(format: "%.0f %%", $0 * 100) } ?? "–"
            }
            lines.append("| \(shape.description) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// `median 3.1 (2.2 to 5.6)`.
    private static func range(_ values: [Double]) -> String {
        guard let median = Report.median(values), let low = values.min(), let high = values.max() else {
            return "not sampled"
        }
        return String(format: "median %.1f (%.1f to %.1f)", median, low, high)
    }
}
