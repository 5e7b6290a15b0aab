import Foundation
import KVOTestSupport
import Testing

/// docs/CLIENT.md's examples, run as built against a fresh kvod: the guide stays true.
@Suite struct ExamplesTests {
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

    @Test(arguments: ["AsyncExample", "ControllerExample", "RegistryExample"])
    func guideShowsTheExampleAsItIsBuilt(_ name: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("docs/CLIENT.md"), encoding: .utf8)
        let example = root.appendingPathComponent("Examples/\(name)/\(name).swift")
        let source = try String(contentsOf: example, encoding: .utf8)
        // The file's first line says where it is shown; the rest is shown verbatim.
        let shown = source.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[1]
        #expect(guide.contains("```swift\n" + shown + "```"), "docs/CLIENT.md's copy of \(name) is out of date")
    }
}
