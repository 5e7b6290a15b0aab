import Foundation

/// docs/PERFORMANCE.md: hand-written text with sections that the benchmark
/// writes between markers, `<!-- kvod-bench:NAME:begin -->` … `:end -->`.
struct PerformanceDocument {
    let path: String

    /// Replaces section `name` (or appends it, or creates the file).
    func replace(section name: String, with body: String) throws {
        let begin = "<!-- kvod-bench:\(name):begin -->"
        let end = "<!-- kvod-bench:\(name):end -->"
        let block = begin + "\n<!-- Written by kvod-bench; everything up to the end marker is replaced by the next run. -->\n"
            + body + "\n" + end
        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let updated: String
        if let first = existing.range(of: begin), let last = existing.range(of: end), first.lowerBound < last.lowerBound {
            updated = existing.replacingCharacters(in: first.lowerBound..<last.upperBound, with: block)
        } else {
            updated = existing + (existing.isEmpty || existing.hasSuffix("\n\n") ? "" : "\n") + block + "\n"
        }
        try updated.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A section's last lines: its problems, or that there were none, then its notes if any.
    static func problemsAndNotes(_ problems: [String], _ notes: [String]) -> String {
        (problems.isEmpty ? "No lost, duplicated or out-of-order events and no error replies in any round."
            : "**Problems:**\n\n" + problems.map { "- " + $0 }.joined(separator: "\n"))
            + "\n" + (notes.isEmpty ? "" : "\n**Notes:**\n\n" + notes.map { "- " + $0 }.joined(separator: "\n"))
    }
}
