import ArgumentParser
import Foundation

/// `kvod-bench micro-summary`: reads the Markdown report of the engine
/// micro-benchmarks (`swift package benchmark --format markdown`, run in
/// Benchmarks/) and writes a one-line-per-benchmark table: the median wall
/// clock time and allocations per operation, and for each dispatch benchmark
/// what a million idle observations add.
struct MicroSummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "micro-summary",
        abstract: "Summarize the engine micro-benchmarks' Markdown report for docs/PERFORMANCE.md.")

    @Option(help: "The report written by `swift package benchmark --format markdown`.")
    var input: String

    @Option(help: "Write the table into this Markdown file, between its kvod-bench markers.")
    var write: String?

    func run() throws {
        let report = try String(contentsOfFile: input, encoding: .utf8)
        let results = MicroResult.parse(report)
        guard !results.isEmpty else { throw ValidationError("no benchmarks found in \(input)") }
        let table = MicroResult.table(results) + "\n\n" + MicroResult.idleCheck(results) + "\n\n"
            + MicroResult.prefixCheck(results)
        print(table)
        if let write { try PerformanceDocument(path: write).replace(section: "micro", with: table) }
    }
}

/// One micro-benchmark's medians.
struct MicroResult {
    var name: String
    /// Median wall clock time per operation, in nanoseconds.
    var nanoseconds: Double
    /// Median allocations per operation.
    var mallocs: Double?

    /// Reads `### name` headings and their `Time (wall clock)` and `Malloc (total)` rows (p50 column).
    static func parse(_ markdown: String) -> [MicroResult] {
        var results: [MicroResult] = []
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") {
                results.append(MicroResult(name: String(line.dropFirst(4)), nanoseconds: .nan, mallocs: nil))
                continue
            }
            guard !results.isEmpty, line.hasPrefix("|") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let p50 = Double(cells[3]) else { continue }
            if cells[0].hasPrefix("Time (wall clock)") {
                results[results.count - 1].nanoseconds = p50 * unitScale(cells[0])
            } else if cells[0].hasPrefix("Malloc (total)") {
                results[results.count - 1].mallocs = p50
            }
        }
        return results.filter { !$0.nanoseconds.isNaN }
    }

    /// Nanoseconds per unit named in a metric's label, e.g. `Time (wall clock) (μs) *`.
    private static func unitScale(_ label: String) -> Double {
        if label.contains("(ns)") { return 1 }
        if label.contains("(μs)") || label.contains("(us)") { return 1_000 }
        if label.contains("(ms)") { return 1_000_000 }
        if label.contains("(s)") { return 1_000_000_000 }
        return 1
    }

    static func table(_ results: [MicroResult]) -> String {
        var lines = ["| micro-benchmark | time per operation (median) | allocations per operation |", "|---|---:|---:|"]
        for result in results {
            let mallocs = result.mallocs.map { $0 == $0.rounded() ? String(Int($0)) : Report.number($0) } ?? "–"
            lines.append("| \(result.name) | \(duration(result.nanoseconds)) | \(mallocs) |")
        }
        return lines.joined(separator: "\n")
    }

    /// For each "dispatch a change to N of M observations" pair, what the idle ones add (target: under 10 %).
    static func idleCheck(_ results: [MicroResult]) -> String {
        var lines = ["| dispatch to | without idle observations | among 1,000,000 idle | change | under 10 % |",
                     "|---|---:|---:|---:|---|"]
        let dispatches = results.compactMap { result -> (matching: Int, total: Int, nanoseconds: Double)? in
            let words = result.name.split(separator: " ")
            guard result.name.hasPrefix("dispatch a change to"), words.count >= 8,
                  let matching = Int(words[4]), let total = Int(words[6]) else { return nil }
            return (matching, total, result.nanoseconds)
        }
        for alone in dispatches where alone.total == alone.matching {
            guard let crowded = dispatches.first(where: { $0.matching == alone.matching && $0.total > alone.total })
            else { continue }
            let change = crowded.nanoseconds / alone.nanoseconds - 1
            lines.append("| \(alone.matching.formatted) | \(duration(alone.nanoseconds)) | \(duration(crowded.nanoseconds)) | "
                + "\(String(format: "%+.1f %%", change * 100)) | \(change < 0.10 ? "yes" : "**no**") |")
        }
        return lines.joined(separator: "\n")
    }

    /// What 100,000 prefix observations of other prefixes add to a change (target: under 10 %).
    static func prefixCheck(_ results: [MicroResult]) -> String {
        let stem = "prefixes: a change to 1 observation among "
        func time(_ prefixes: Int) -> Double? {
            results.first { $0.name == stem + "\(prefixes) prefix observations of other prefixes" }?.nanoseconds
        }
        guard let alone = time(0), let crowded = time(100_000) else { return "" }
        let change = crowded / alone - 1
        return ["| a change to 1 observation | no prefix observations | among 100,000 of other prefixes | change | under 10 % |",
                "|---|---:|---:|---:|---|",
                "| 1 | \(duration(alone)) | \(duration(crowded)) | \(String(format: "%+.1f %%", change * 100)) | "
                    + "\(change < 0.10 ? "yes" : "**no**") |"].joined(separator: "\n")
    }

    static func duration(_ nanoseconds: Double) -> String {
        if nanoseconds >= 1_000_000 { return String(format: "%.3g ms", nanoseconds / 1_000_000) }
        if nanoseconds >= 1_000 { return String(format: "%.3g µs", nanoseconds / 1_000) }
        return String(format: "%.0f ns", nanoseconds)
    }
}
