import Foundation

/// One line on stderr, at once (stdout is buffered when piped): what each measurement gave.
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

extension ScenarioResult {
    /// The figures, then any problem or note, for a progress line.
    var summary: String {
        let shown = figures.map { "\(Report.number($0.value)) \($0.unit)" }.joined(separator: ", ")
        return shown + (problems.isEmpty ? "" : "  PROBLEM: " + problems.joined(separator: "; "))
            + (notes.isEmpty ? "" : "  note: " + notes.joined(separator: "; "))
    }
}
