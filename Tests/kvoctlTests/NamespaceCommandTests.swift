import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `kvoctl list`, `observe --prefix`, `observe OBJECT` and `set OBJECT VALUE`, and the README's registry recipe.
@Suite struct NamespaceCommandTests {
    func waitForObservations(_ kvod: KVODProcess, _ count: Int) async throws {
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        try await waitUntil("kvod holds \(count) observations", timeout: 60) {
            try await connection.info().observations == count
        }
    }

    /// README.md, "A service registry", as written.
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
