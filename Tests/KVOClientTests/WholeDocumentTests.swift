import KVOClient
import KVOTestSupport
import Testing

/// Observing and setting whole documents against the real kvod.
@Suite(.onDedicatedThread) struct WholeDocumentTests {
    @Test func wholeDocumentStreamCarriesTheDocumentAndWhereItChanged() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("p", "name", to: "a")
        let changes = StreamRecorder(connection.changes(of: "p", options: [.new, .old, .initial], context: "c"))
        let initial = try await changes.changes.waitForCount(1)[0]
        #expect(initial.isInitial && initial.keyPath == nil && initial.new == ["name": "a"] && initial.context == "c")

        let seq = try await connection.set("p", "address.city", to: "Oslo")
        let nested = try await changes.changes.waitForCount(2)[1]
        #expect(nested.keyPath == nil && nested.kind == .setting && nested.seq == seq)
        #expect(nested.changedKeyPath == "address.city", "a change made below the whole document says where")
        #expect(nested.new == ["name": "a", "address": ["city": "Oslo"]] && nested.old == ["name": "a"])
        #expect(nested.prefix == nil)

        try await connection.setDocument("p", to: ["x": 1] as JSONValue)
        let replaced = try await changes.changes.waitForCount(3)[2]
        #expect(replaced.changedKeyPath == nil, "a whole-document set has no changedKeyPath")
        #expect(replaced.new == ["x": 1])

        try await connection.delete("p")
        let deleted = try await changes.changes.waitForCount(4)[3]
        #expect(deleted.new == .null && deleted.old == ["x": 1])

        let records = try await connection.observations()
        #expect(records.count == 1 && records[0].object == "p" && records[0].keyPath == nil && !records[0].isPrefix)
    }

    @Test func keyPathObservationsTellWhereAChangeBelowThemWasMade() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let changes = StreamRecorder(connection.changes(of: "p", keyPath: "address", options: [.new]))
        try await connection.set("p", "address.city", to: "Oslo")
        let below = try await changes.changes.waitForCount(1)[0]
        #expect(below.keyPath == "address" && below.changedKeyPath == "address.city")
        try await connection.set("p", "address", to: ["city": "Bergen"] as JSONValue)
        let at = try await changes.changes.waitForCount(2)[1]
        #expect(at.changedKeyPath == nil, "a change at the observed key path itself has none")
    }

    @Test func setDocumentWithSomethingOtherThanAnObjectIsNotAnObject() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        await #expect(throws: KVOClientError.self) { try await connection.setDocument("p", to: 5 as JSONValue) }
        do {
            try await connection.setDocument("p", to: [1, 2] as JSONValue)
            Issue.record("an array replaced a whole document")
        } catch {
            #expect(error.code == .notAnObject)
        }
        struct Person: Codable, Equatable { var name: String }
        try await connection.setDocument("p", to: Person(name: "x"))
        #expect(try await connection.get(Person.self, "p") == Person(name: "x"))
    }

    @Test func secondWholeDocumentSubscriberWithInitialGetsTheDocumentFromAGet() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("p", "n", to: 1)
        let first = StreamRecorder(connection.changes(of: "p", options: [.new]))
        try await waitUntil("the first observation is registered", timeout: 10) {
            try await connection.observations().count == 1
        }
        let second = StreamRecorder(connection.changes(of: "p", options: [.new, .initial]))
        let initial = try await second.changes.waitForCount(1)[0]
        #expect(initial.isInitial && initial.new == ["n": 1] && initial.keyPath == nil)
        try await connection.set("p", "n", to: 2)
        #expect(try await first.changes.waitForCount(1).map(\.new) == [["n": 2]])
        #expect(try await second.changes.waitForCount(2).map(\.new) == [["n": 1], ["n": 2]])
    }
}
