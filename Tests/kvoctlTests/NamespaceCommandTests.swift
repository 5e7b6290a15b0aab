import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `kvoctl list`, `observe --prefix`, `observe OBJECT` and `set OBJECT VALUE`, and the README's registry recipe.
@Suite(.onDedicatedThread) struct NamespaceCommandTests {
    func waitForObservations(_ kvod: KVODProcess, _ count: Int) async throws {
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        try await waitUntil("kvod holds \(count) observations", timeout: 60) {
            try await connection.info().observations == count
        }
    }

    /// README.md, "A service registry": its shell lines run as written by sh, except that the
    /// watcher is given `--count 2` so that the script ends (with `--initial` it sees both
    /// services whether it registers before the second `set` or after it).
    @Test func readmeRegistryRecipeAsWritten() async throws {
        let kvod = try await KVODProcess()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## A service registry").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```sh\n").dropFirst().first?
            .components(separatedBy: "```").first)
        #expect(block.contains("kvoctl observe --prefix services/ addr --initial --new &"))
        let script = block.replacingOccurrences(of: "--initial --new &", with: "--initial --new --count 2 &") + "wait\n"
        let path = KVOCtl.binaryURL.deletingLastPathComponent().path + ":/usr/bin:/bin"
        let run = try await RunningCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", script],
                                           environment: ["PATH": path, "KVOD_SOCKET": kvod.socketPath]).wait()
        #expect(run.status == 0, "\(run.stderr)")
        let events = try run.lines.filter { $0.hasPrefix("{") }.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(events.count == 2, "\(run.stdout)")
        #expect(Set(events.compactMap { $0["object"] as? String }) == ["services/web", "services/db"])
        #expect(events.allSatisfy { $0["prefix"] as? String == "services/" && $0["keyPath"] as? String == "addr" })
        let web = events.first { $0["object"] as? String == "services/web" }
        #expect(web?["initial"] as? Bool == true && web?["new"] as? String == "10.0.0.5:80",
                "the service that was there before the watcher comes as an initial event")
        let names = run.lines.filter { $0.hasPrefix("services/") }
        #expect(names == ["services/db", "services/web"], "list prints who is there, in order: \(run.stdout)")
    }

    /// The recipe's steps one by one, with the exact lines kvoctl prints.
    @Test func readmeRegistryRecipe() async throws {
        let kvod = try await KVODProcess()
        #expect(try await KVOCtl.run(kvod, ["set", "services/web", "addr", #""10.0.0.5:80""#]).status == 0)
        let watcher = try RunningCommand(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #""$KVOCTL" observe --prefix services/ addr --initial --new --count 2"#],
            environment: ["KVOCTL": KVOCtl.binaryURL.path, "KVOD_SOCKET": kvod.socketPath])
        try await waitForObservations(kvod, 1)
        #expect(try await KVOCtl.run(kvod, ["set", "services/db", "addr", #""10.0.0.6:5432""#]).status == 0)
        let run = try await watcher.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            #"{"event":"change","object":"services/web","prefix":"services/","keyPath":"addr","kind":"setting","initial":true,"new":"10.0.0.5:80","seq":1}"#,
            #"{"event":"change","object":"services/db","prefix":"services/","keyPath":"addr","kind":"setting","new":"10.0.0.6:5432","seq":2}"#,
        ])
        let list = try await KVOCtl.run(kvod, ["list", "services/"])
        #expect(list.status == 0 && list.stdout == "services/db\nservices/web\n", "\(list.stderr)")
    }

    @Test func listPrintsEveryNameOneALineAcrossPages() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        // More than one page of kvod's default 1000.
        let names = (0..<1003).map { String(format: "n/%04d", $0) }
        for name in names { try await connection.set(name, "k", to: 1) }
        try await connection.set("other", "k", to: 1)
        let run = try await KVOCtl.run(kvod, ["list", "n/"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == names)
        #expect(try await KVOCtl.run(kvod, ["list"]).lines.count == 1004)
        #expect(try await KVOCtl.run(kvod, ["list", "none/"]).stdout.isEmpty)
    }

    @Test func observeWithoutKeyPathPrintsTheWholeDocumentAndSetWithoutKeyPathReplacesIt() async throws {
        let kvod = try await KVODProcess()
        let observe = try RunningCommand(
            KVOCtl.binaryURL, ["observe", "person/1", "--new", "--count", "2", "--socket", kvod.socketPath])
        try await waitForObservations(kvod, 1)
        #expect(try await KVOCtl.run(kvod, ["set", "person/1", "address.city", "Oslo"]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["set", "person/1", #"{"name":"x"}"#]).status == 0)
        let run = try await observe.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [
            #"{"event":"change","object":"person/1","kind":"setting","new":{"address":{"city":"Oslo"}},"changedKeyPath":"address.city","seq":1}"#,
            #"{"event":"change","object":"person/1","kind":"setting","new":{"name":"x"},"seq":2}"#,
        ])
        #expect(try await KVOCtl.run(kvod, ["get", "person/1"]).stdout == #"{"name":"x"}"# + "\n")
    }

    @Test func observeAWholeDocumentPrefix() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "s/a", "k", "1"])
        let run = try await KVOCtl.run(kvod, ["observe", "--prefix", "s/", "--initial", "--new", "--count", "1"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == [#"{"event":"change","object":"s/a","prefix":"s/","kind":"setting","initial":true,"new":{"k":1},"seq":1}"#])
    }
}
