import Foundation
import Testing

/// No merge's conflict left in the tree: a line that starts with git's markers in
/// a source, test, script or document (one was committed into ARCHITECTURE.md by
/// a merge whose conflict list went unread).
@Suite struct ConflictMarkerTests {
    static let folders = ["Sources", "Tests", "docs", "scripts", "systemd", "Benchmarks", ".ci"]
    static let files = ["README.md", "CHANGELOG.md", "Package.swift", "SECURITY.md"]
    static let markers = ["<<<<<<< ", ">>>>>>> ", "======="]

    @Test func noFileHoldsAConflictMarker() throws {
        let root = WireNameLiteralTests.root
        var paths = Self.files.map { root.appendingPathComponent($0) }
        for folder in Self.folders {
            guard let walk = FileManager.default.enumerator(at: root.appendingPathComponent(folder),
                                                            includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk where !url.path.contains("/.build") { paths.append(url) }
        }
        var offences: [String] = []
        var read = 0
        for url in paths {
            guard let data = FileManager.default.contents(atPath: url.path), data.count < 4 << 20,
                  let text = String(data: data, encoding: .utf8) else { continue }
            read += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where Self.markers.contains(where: { line.hasPrefix($0) }) && (line != "=======" || Self.isMarked(text)) {
                offences.append("\(url.path.dropFirst(root.path.count + 1)):\(number + 1): \(line.prefix(60))")
            }
        }
        #expect(read > 500, "only \(read) files read")
        #expect(offences.isEmpty, "conflict markers:\n\(offences.joined(separator: "\n"))")
    }

    /// `=======` alone is a Markdown heading's underline; it counts beside the other markers only.
    private static func isMarked(_ text: String) -> Bool {
        text.contains("\n<<<<<<< ") || text.contains("\n>>>>>>> ")
    }
}
