import Foundation
import Testing

/// docs/ARCHITECTURE.md's table of modules is the module graph: every `import` in a
/// module's Swift files is one its row allows, and every module has a row. An import
/// that crosses a layer (the engine reaching for Foundation, a client for the engine)
/// fails here until the table says so, in the same commit.
@Suite struct ModuleGraphTests {
    static let root = ArchitectureDocumentTests.root

    /// Modules every Swift file may import: the C library and the standard library's own.
    static let platformModules: Set<String> = ["Glibc", "Darwin", "Musl", "Synchronization", "_Concurrency"]

    /// What a row's "may import" column allows: modules anywhere in the module, and
    /// modules only in the files or folders their entry names ("X only in `Sources/…`").
    struct Allowance {
        var anywhere: Set<String> = []
        var onlyIn: [String: [String]] = [:]

        func allows(_ module: String, in path: String) -> Bool {
            if anywhere.contains(module) || ModuleGraphTests.platformModules.contains(module) { return true }
            return onlyIn[module]?.contains { path == $0 || path.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") } ?? false
        }
    }

    /// The table's rows: a module's folder (`Sources/X` or `Tests/X`) to its allowance.
    static func documentedGraph() throws -> [String: Allowance] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        guard let start = text.range(of: "## Modules and what each may import") else { return [:] }
        let section = text[start.upperBound...]
        var graph: [String: Allowance] = [:]
        for line in section.split(separator: "\n") {
            guard line.hasPrefix("| `Sources/") || line.hasPrefix("| `Tests/") else {
                if line.hasPrefix("## ") { break }
                continue
            }
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard columns.count >= 4 else { continue }
            let folders = backtickedPaths(in: columns[1]).filter { $0.split(separator: "/").count == 2 }
            let allowance = try parseAllowance(columns[3])
            for folder in folders { graph[folder] = allowance }
        }
        return graph
    }

    /// "A, B (why), swift-collections; C and D only in `Sources/x/`": entries split by `;`,
    /// modules by `,` and "and" once parenthesized prose is set aside; an entry saying "only" holds its modules
    /// to the paths it names.
    static func parseAllowance(_ column: String) throws -> Allowance {
        var allowance = Allowance()
        for entry in column.split(separator: ";").map(String.init) {
            let prose = try NSRegularExpression(pattern: "\\([^)]*\\)")
            let bare = prose.stringByReplacingMatches(
                in: entry, range: NSRange(entry.startIndex..., in: entry), withTemplate: "")
            var modules: [String] = []
            for piece in bare.replacingOccurrences(of: " and ", with: ",").split(separator: ",") {
                guard let word = piece.split(separator: " ").first.map(String.init) else { continue }
                if word == "swift-collections" {
                    modules += ["OrderedCollections", "DequeModule", "HeapModule"]
                } else if let first = word.unicodeScalars.first, CharacterSet.uppercaseLetters.contains(first) {
                    modules.append(word)
                }
            }
            let isRestricted = bare.split(separator: " ").contains("only")
            for module in modules {
                if isRestricted {
                    allowance.onlyIn[module, default: []] += backtickedPaths(in: entry)
                } else {
                    allowance.anywhere.insert(module)
                }
            }
        }
        return allowance
    }

    static func backtickedPaths(in text: String) -> [String] {
        guard let pattern = try? NSRegularExpression(pattern: "`((?:Sources|Tests)/[^`\\s]*)`") else { return [] }
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// Every module a Swift file imports (`import X`, `@testable import X`, `internal import X`,
    /// `import struct X.Y`).
    static func imports(ofFile path: String) throws -> [String] {
        let source = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern: "^\\s*(?:@\\w+(?:\\([^)]*\\))?\\s+)*(?:public |internal |package |private |fileprivate )?import\\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\\s+)?(\\w+)",
            options: .anchorsMatchLines)
        return pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)).compactMap { match in
            Range(match.range(at: 1), in: source).map { String(source[$0]) }
        }
    }

    static func swiftFiles(under folder: String) -> [String] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { folder + "/" + $0 }.sorted()
    }

    @Test func everyImportIsOneTheTableAllows() throws {
        let graph = try Self.documentedGraph()
        // The table has a row per module; a parser that found none would pass anything.
        #expect(graph.count >= 15, "\(graph.count) modules found in the table")
        var crossings: [String] = []
        for (folder, allowance) in graph.sorted(by: { $0.key < $1.key }) {
            for file in Self.swiftFiles(under: folder) {
                for module in try Self.imports(ofFile: file) where !allowance.allows(module, in: file) {
                    crossings.append("\(file) imports \(module)")
                }
            }
        }
        #expect(crossings.isEmpty, "imports docs/ARCHITECTURE.md's table of modules does not allow:\n\(crossings.joined(separator: "\n"))")
    }

    @Test func everyModuleTheTableAllowsIsImported() throws {
        // A row that allows more than its module imports says less than the truth too.
        let collections: Set<String> = ["OrderedCollections", "DequeModule", "HeapModule"]
        var unused: [String] = []
        for (folder, allowance) in try Self.documentedGraph().sorted(by: { $0.key < $1.key }) {
            let files = Self.swiftFiles(under: folder)
            guard !files.isEmpty else { continue }
            var imported = Set<String>()
            for file in files { imported.formUnion(try Self.imports(ofFile: file)) }
            var allowed = allowance.anywhere.union(allowance.onlyIn.keys)
            if allowed.isSuperset(of: collections) {
                allowed.subtract(collections)
                if imported.isDisjoint(with: collections) { unused.append("\(folder): swift-collections") }
            }
            for module in allowed.sorted() where !imported.contains(module) {
                unused.append("\(folder): \(module)")
            }
        }
        #expect(unused.isEmpty, "docs/ARCHITECTURE.md's table allows imports no file makes:\n\(unused.joined(separator: "\n"))")
    }

    @Test func everyModuleHasARow() throws {
        let graph = try Self.documentedGraph()
        let sources = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
        let missing = sources.map { "Sources/" + $0 }.filter { graph[$0] == nil }.sorted()
        #expect(missing.isEmpty, "modules without a row in docs/ARCHITECTURE.md's table: \(missing)")
    }

    @Test func theTableReaderHoldsAnEntryToItsPaths() throws {
        let allowance = try Self.parseAllowance(
            " KVOEngine, Logging (and `Sources/x` linked in), swift-collections; KVOEtcd and CX only in `Sources/kvod/Cluster/` and `Sources/kvod/A.swift` ")
        #expect(allowance.allows("KVOEngine", in: "Sources/kvod/B.swift"))
        #expect(allowance.allows("DequeModule", in: "Sources/kvod/B.swift"))
        #expect(allowance.allows("KVOEtcd", in: "Sources/kvod/Cluster/R.swift"))
        #expect(allowance.allows("KVOEtcd", in: "Sources/kvod/A.swift"))
        #expect(!allowance.allows("KVOEtcd", in: "Sources/kvod/B.swift"))
        #expect(!allowance.allows("KVOEtcd", in: "Sources/kvod/ClusterX.swift"))
        #expect(allowance.allows("CX", in: "Sources/kvod/A.swift") && !allowance.allows("CX", in: "Sources/kvod/B.swift"))
        #expect(!allowance.allows("Foundation", in: "Sources/kvod/B.swift"))
    }
}
