import Foundation
import KVOClient
import KVOTestSupport
import Testing

struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var tags: [String]
}

/// The async/await style's requests against the real kvod.
@Suite(.onDedicatedThread) struct AsyncOperationsTests {
    @Test func setThenGetRoundTripsCodableValues() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let person = Person(name: "xz", age: 41, tags: ["a", "b"])
        let first = try await connection.set("person/1", "profile", to: person)
        #expect(try await connection.get(Person.self, "person/1", "profile") == person)
        #expect(try await connection.get(String.self, "person/1", "profile.name") == "xz")
        let second = try await connection.set("person/1", "city", to: "Oslo")
        #expect(second == first + 1)
        let whole = try await connection.get("person/1")
        // Encodable members are written sorted by name, so documents are stable from run to run.
        #expect(whole == ["profile": ["age": 41, "name": "xz", "tags": ["a", "b"]], "city": "Oslo"])
    }

    @Test func jsonValuesKeepLargeIntegersDigitForDigit() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let huge = JSONValue.number(JSONNumber(validatedLiteral: "123456789012345678901234567890"))
        try await connection.set("o", "n", to: huge)
        #expect(try await connection.get("o", "n") == huge)
    }

    @Test func deleteInsertRemoveReplaceChangeTheDocument() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.insert("o", "list", ["a", "d"])
        try await connection.insert("o", "list", ["b", "c"], at: 1)
        #expect(try await connection.get([String].self, "o", "list") == ["a", "b", "c", "d"])
        try await connection.remove("o", "list", at: [3, 0])
        try await connection.replace("o", "list", at: [1], with: ["z"])
        #expect(try await connection.get([String].self, "o", "list") == ["b", "z"])
        let deleted = try await connection.delete("o", "list")
        #expect(try await connection.delete("o", "list") == deleted, "deleting nothing returns the current seq")
        await #expect(throws: KVOClientError(.notFound, "o has no value at list", modSeq: 0)) {
            try await connection.get("o", "list")
        }
    }

    @Test func daemonErrorsCarryTheProtocolsCodeAndMessage() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("o", "s", to: "text")
        let cases: [(String, KVOClientError.Code)] = [("s.x", .notAnObject), ("a..b", .badRequest)]
        for (keyPath, code) in cases {
            do {
                try await connection.set("o", keyPath, to: 1)
                Issue.record("set \(keyPath) succeeded")
            } catch {
                #expect(error.code == code)
                #expect(error.isDaemonError)
                #expect(!error.message.isEmpty)
            }
        }
        do {
            try await connection.insert("o", "s", [1])
            Issue.record("insert into a string succeeded")
        } catch {
            #expect(error.code == .notAnArray)
        }
        // Nothing changed, and the connection goes on.
        #expect(try await connection.get("o") == ["s": "text"])
    }

    @Test func valuesThatWillNotEncodeOrDecodeFailWithoutTouchingTheDaemon() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("o", "n", to: 1)
        do {
            try await connection.set("o", "n", to: Double.nan)
            Issue.record("NaN was sent")
        } catch {
            #expect(error.code == .encodingFailed)
            #expect(!error.isDaemonError)
        }
        do {
            _ = try await connection.get(String.self, "o", "n")
            Issue.record("a number decoded as a string")
        } catch {
            #expect(error.code == .decodingFailed)
        }
        #expect(try await connection.get(Int.self, "o", "n") == 1)
    }

    @Test func infoAndPingAnswer() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.ping()
        let seq = try await connection.set("o", "k", to: true)
        let info = try await connection.info()
        #expect(info.seq == seq)
        #expect(info.connections == 1)
        #expect(info.objects == 1)
        #expect(!info.version.isEmpty)
    }

    @Test func fiftyTasksShareOneConnection() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<50 {
                group.addTask {
                    let object = "task/\(task)"
                    var changes = connection.changes(of: object, keyPath: "v", options: [.new]).makeAsyncIterator()
                    for round in 0..<20 {
                        let value = task * 1000 + round
                        try await connection.set(object, "v", to: value)
                        #expect(try await connection.get(Int.self, object, "v") == value)
                        #expect(try await changes.next()?.new == .number(JSONNumber(value)))
                    }
                }
            }
            try await group.waitForAll()
        }
        let info = try await connection.info()
        #expect(info.connections == 1)
        #expect(info.objects == 50)
        #expect(info.observations == 0, "every stream was dropped, so every observation withdrawn")
    }

    @Test func closedConnectionFailsRequestsAndEndsStreams() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var before = connection.changes(of: "o", keyPath: "k").makeAsyncIterator()
        try await connection.ping()
        connection.close()
        await #expect(throws: KVOClientError(.closed, "the connection was closed")) { try await before.next() }
        await #expect(throws: KVOClientError(.closed, "the connection was closed")) {
            try await connection.set("o", "k", to: 1)
        }
        var after = connection.changes(of: "o", keyPath: "k").makeAsyncIterator()
        await #expect(throws: KVOClientError(.closed, "the connection was closed")) { try await after.next() }
    }

    @Test func connectingWhereNoDaemonListensFailsWithCannotConnect() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            _ = try KVOConnection(socketPath: directory + "/nobody.sock")
            Issue.record("connected to nothing")
        } catch {
            #expect(error.code == .cannotConnect)
            #expect(error.message.contains("nobody.sock"))
        }
    }

    @Test func defaultSocketPathHonoursKVODSocket() {
        #expect(KVOConnection.defaultSocketPath(environment: ["KVOD_SOCKET": "/tmp/x/kvod.sock"]) == "/tmp/x/kvod.sock")
    }
}
