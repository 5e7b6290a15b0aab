import Foundation
import KVOTestSupport
import Testing

/// docs/CLIENT.md's examples, run as built against a fresh kvod: the guide stays true.
@Suite(.onDedicatedThread) struct ExamplesTests {
    func runExample(_ name: String) throws -> CommandRun {
        let kvod = try KVODProcess()
        return try CommandRun.run(KVODProcess.productsDirectory.appendingPathComponent(name), [],
                                  environment: ["KVOD_SOCKET": kvod.socketPath])
    }

    @Test func asyncExamplePrintsWhatTheGuideShows() throws {
        let run = try runExample("AsyncExample")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            #"name: - -> "xz""#,
            #"name: "xz" -> "xsc""#,
            "city: Oslo",
            "age: not_found - person/1 has no value at age",
        ])
    }

    @Test func controllerExamplePrintsWhatTheGuideShows() throws {
        let run = try runExample("ControllerExample")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "person/1 name: ?",
            "person/1 name: xsc",
            #"tags insertion at [0, 1, 2]: ["swift", "kvo", "linux"]"#,
            #"tags removal at [1]: ["swift", "linux"]"#,
            #"shown: xsc ["swift", "linux"]"#,
        ])
    }

    @Test func registryExamplePrintsWhatTheGuideShows() throws {
        let run = try runExample("RegistryExample")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            #"services: ["services/db", "services/web"]"#,
            #"present: services/db "10.0.0.6:5432""#,
            #"present: services/web "10.0.0.5:80""#,
            #"joined: services/api "10.0.0.7:443""#,
            #"person/1 at address.city -> {"address":{"city":"Oslo"}}"#,
            #"person/1 at (whole) -> {"name":"xsc"}"#,
        ])
    }

    @Test func clientSnippetsThatNeedOnlyAKvodPrintWhatTheirCommentsSay() throws {
        let run = try runExample("ClientSnippets")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            "ended: bad_request (one observation)",
            "status: idle",
            "ended: closed (every observation)",
            "status: idle",
            "followed: done",
            "1 -4096",
            "workers: 4",
            "15 [Optional(14), Optional(15)]",
        ])
    }

    /// Every ```swift block of docs/CLIENT.md is the shown part of a file under Examples/, which
    /// the build compiles, and every such file is in the guide; a block whose fence says
    /// `swift example` (a fragment, such as a Package.swift excerpt) is exempt.
    @Test func everySwiftBlockOfTheGuideIsAnExampleTheBuildCompiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/CLIENT.md"), encoding: .utf8)
        let blocks = guide.components(separatedBy: "\n```swift\n").dropFirst()
            .compactMap { $0.components(separatedBy: "```").first }
        let examples = root.appendingPathComponent("Examples")
        var shown: [String: String] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: examples.path) {
            let directory = examples.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift")
                && file != "ClientSnippets.swift" {
                let source = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                shown["Examples/\(folder)/\(file)"] = Self.shownPart(of: source)
            }
        }
        #expect(blocks.count >= 8, "docs/CLIENT.md has its Swift blocks")
        let parts = Set(shown.values)
        for block in blocks where !parts.contains(block) {
            Issue.record("docs/CLIENT.md's block starting \"\(block.prefix(60))\" is no file's shown part under Examples/")
        }
        for (path, part) in shown.sorted(by: { $0.key < $1.key }) where !blocks.contains(part) {
            Issue.record("docs/CLIENT.md does not show \(path) as it is")
        }
    }

    /// What the guide shows of an example file: all but its first line (which says where it is
    /// shown) and the lines from `// snippet.hide` to `// snippet.show`, indented as the least
    /// indented shown line.
    static func shownPart(of source: String) -> String {
        var lines: [Substring] = []
        var hidden = false
        for line in source.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            switch line.trimmingCharacters(in: .whitespaces) {
            case "// snippet.hide": hidden = true
            case "// snippet.show": hidden = false
            default: if !hidden { lines.append(line) }
            }
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.dropFirst(min(indent, $0.count)) }.joined(separator: "\n") + "\n"
    }
}
