import Foundation
import Testing

/// docs/ARCHITECTURE.md stays true to the tree: every file or folder it
/// names exists, so a rename or a deletion that forgets the map fails here.
@Suite struct ArchitectureDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `Sources/…` or `Tests/…` path written in backticks.
    static func namedPaths() throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "`((?:Sources|Tests)/[^`\\s]+)`")
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test func everyPathTheDocumentNamesExists() throws {
        let paths = try Self.namedPaths()
        // The path of a set alone names more than thirty files: a document
        // whose paths stopped being found would pass with none.
        #expect(paths.count >= 30, "\(paths.count) paths found")
        let missing = paths.filter { !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }
        #expect(missing.isEmpty, "docs/ARCHITECTURE.md names files that do not exist: \(missing)")
    }

    @Test func everyTypeTheDocumentPairsWithAFileIsDeclaredThere() throws {
        // "`Type` (`Sources/…/File.swift`)": the type is declared in that file.
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "`([A-Z][A-Za-z]+)`\\s+\\(`((?:Sources|Tests)/[^`]+\\.swift)`")
        let pairs = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).flatMap { type in
                Range(match.range(at: 2), in: text).map { (String(text[type]), String(text[$0])) }
            }
        }
        #expect(pairs.count >= 10, "\(pairs.count) pairs found")
        for (type, path) in pairs {
            let source = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            let declared = ["class", "struct", "enum", "protocol", "actor", "extension"].contains { keyword in
                source.contains("\(keyword) \(type)")
            }
            #expect(declared, "docs/ARCHITECTURE.md says \(type) is in \(path), which does not declare it")
        }
    }
}
