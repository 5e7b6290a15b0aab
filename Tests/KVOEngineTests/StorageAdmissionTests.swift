@testable import KVOEngine
import KVOValues
import Testing

/// Writes on a full disk (docs/DURABILITY.md, "A full disk"): the engine
/// refuses what ``Engine/storageAdmission`` does not let through with
/// `storage_full` before anything is applied; reads and observations go on.
@Suite struct StorageAdmissionTests {
    @Test func writesThatAddDataAreRefusedUnchangedAndUnseenWhileRemovalsGoOn() {
        let (fixture, writer, observer) = EngineFixture.withTwoClients()
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 1], from: writer)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "values": [1, 2]], from: writer)
        fixture.ok(["op": "observe", "object": "o", "options": ["new"]], from: observer)
        fixture.engine.storageAdmission = .removalsOnly
        for refused: JSONValue in [
            ["op": "set", "object": "o", "keyPath": "k", "value": 2],
            ["op": "set", "object": "p", "keyPath": "k", "value": 2, "ifModSeq": 0],
            ["op": "insert", "object": "o", "keyPath": "list", "values": [3]],
            ["op": "replace", "object": "o", "keyPath": "list", "indexes": [0], "values": [9]],
            ["op": "add", "object": "o", "keyPath": "k", "by": 1],
            ["op": "batch", "ops": [["op": "delete", "object": "o", "keyPath": "k"],
                                    ["op": "set", "object": "o", "keyPath": "k", "value": 3]]],
        ] {
            fixture.fails(refused, from: writer, code: "storage_full")
        }
        #expect(fixture.value("o") == ["k": 1, "list": [1, 2]])
        #expect(fixture.store.seq == 2)
        #expect(fixture.take(from: observer).lines.isEmpty)
        #expect(fixture.engine.refusals.storage == 6)
        // Reads, observations and the ops that take data away go on.
        fixture.ok(["op": "get", "object": "o"], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "k", "options": ["new", "initial"]], from: writer)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "list", "indexes": [0]], from: writer)
        fixture.ok(["op": "batch", "ops": [["op": "delete", "object": "o", "keyPath": "k"]]], from: writer)
        #expect(fixture.value("o") == ["list": [2]])
        #expect(fixture.take(from: observer).events.count == 2)
        fixture.engine.storageAdmission = .everything
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 4], from: writer)
    }

    @Test func whileChangesWaitForRoomEveryChangeIsRefused() {
        let (fixture, client) = EngineFixture.withClient()
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 1], from: client)
        fixture.engine.storageAdmission = .nothing
        fixture.fails(["op": "delete", "object": "o"], from: client, code: "storage_full")
        fixture.fails(["op": "remove", "object": "o", "keyPath": "k", "indexes": [0]], from: client, code: "storage_full")
        fixture.ok(["op": "get", "object": "o"], from: client)
        fixture.ok(["op": "list", "prefix": ""], from: client)
        #expect(fixture.value("o") == ["k": 1])
    }
}
