import Foundation
import Testing

/// KVOClient, kvoctl and KVOEtcd take kvod's values from KVOValues and its names from
/// KVOProtocol, not from the engine (issue 32 item 4; docs/ARCHITECTURE.md's module table):
/// no file of theirs imports KVOEngine, and Package.swift lists it as a dependency of none of them
/// (kvoctl still links it through KVOStorage, for `backup`'s check of the file it wrote).
@Suite struct ClientModuleGraphTests {
    static let root = ArchitectureDocumentTests.root

    @Test func noClientFileImportsTheEngine() throws {
        var importing: [String] = []
        for folder in ["Sources/KVOClient", "Sources/kvoctl", "Sources/KVOEtcd"] {
            let url = Self.root.appendingPathComponent(folder)
            let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            #expect(!files.isEmpty, "no Swift file found under \(folder)")
            for file in files {
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                if lines.contains(where: { $0.hasSuffix("import KVOEngine") }) { importing.append(file.lastPathComponent) }
            }
        }
        #expect(importing.isEmpty, "these files import KVOEngine: \(importing)")
    }

    @Test func packageListsTheEngineAsADependencyOfNone() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for target in ["KVOClient", "KVOEtcd", "kvoctl"] {
            let declaration = try #require(Self.declaration(of: target, in: manifest), "no target \(target) in Package.swift")
            #expect(!declaration.contains("\"KVOEngine\""), "\(target) depends on KVOEngine: \(declaration)")
        }
    }

    /// The text of `.target(name: "NAME", …)` or `.executableTarget(…)` up to its closing parenthesis.
    static func declaration(of target: String, in manifest: String) -> Substring? {
        let pattern = "\\.(target|executableTarget)\\(\\s*name: \"\(target)\""
        guard let start = manifest.range(of: pattern, options: .regularExpression) else { return nil }
        var depth = 1  // the declaration's own "(", inside the match
        var index = start.upperBound
        while index < manifest.endIndex, depth > 0 {
            switch manifest[index] {
            case "(": depth += 1
            case ")": depth -= 1
            default: break
            }
            index = manifest.index(after: index)
        }
        return manifest[start.lowerBound..<index]
    }
}
