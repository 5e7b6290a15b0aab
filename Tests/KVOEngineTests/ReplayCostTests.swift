import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 row 1: a `since` replay to a whole-document observation copied
/// the document once per change it undid (a 50,000-member document and 2,000
/// changes held the loop 1.5 s). Undoing is now done in place.
@Suite struct ReplayCostTests {
    /// The address of a document's member values, which moves when the document is copied.
    private static func storage(of document: JSONValue?) -> UnsafeRawPointer? {
        guard case .object(let members)? = document else { return nil }
        return members.values.elements.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func undoingAMemberChangeOfADocumentHeldOnceChangesItInPlace() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        var members = JSONObject()
        for index in 0..<1_000 { members["m\(index)"] = .number(JSONNumber(index)) }
        fixture.ok(["op": "set", "object": "big", "value": .object(members)], from: client)
        for value in 0..<20 {
            fixture.ok(["op": "set", "object": "big", "keyPath": "m7", "value": .number(JSONNumber(1_000 + value))],
                       from: client)
        }
        fixture.ok(["op": "set", "object": "big", "keyPath": "added", "value": 1], from: client)
        fixture.ok(["op": "delete", "object": "big", "keyPath": "m3"], from: client)
        var document = fixture.engine.store.document("big").map(JSONValue.object)
        // Held twice (the store has it too): the first undo copies once.
        let changes = fixture.engine.history.changes(after: 1).reversed()
        var first = true
        var copies = 0
        for change in changes {
            let before = Self.storage(of: document)
            change.undo(document: &document)
            if Self.storage(of: document) != before, !first { copies += 1 }
            first = false
        }
        #expect(copies == 0)
        #expect(document == .object(members), "undone to the document as first set")
    }

    @Test func replayToAWholeDocumentObserverTellsWhatLiveTold() {
        let fixture = EngineFixture()
        let writer = fixture.makeClient()
        let live = fixture.makeClient()
        var members = JSONObject()
        for index in 0..<200 { members["m\(index)"] = .number(JSONNumber(index)) }
        fixture.ok(["op": "set", "object": "big", "value": .object(members)], from: writer)
        fixture.ok(["op": "observe", "object": "big", "options": ["new", "old"]], from: live)
        _ = fixture.take(from: live)
        for value in 0..<30 {
            fixture.ok(["op": "set", "object": "big", "keyPath": .string("m\(value % 7)"),
                        "value": .number(JSONNumber(value))], from: writer)
        }
        fixture.ok(["op": "delete", "object": "big", "keyPath": "m150"], from: writer)
        fixture.ok(["op": "set", "object": "big", "keyPath": "n.deep", "value": 1], from: writer)
        let liveEvents = fixture.take(from: live).events
        let resumer = fixture.makeClient()
        let replayed = fixture.send(["op": "observe", "object": "big", "options": ["new", "old"], "since": 1],
                                    from: resumer).events
        #expect(replayed == liveEvents)
        #expect(replayed.count == 32)
    }
}
