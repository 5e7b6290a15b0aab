import KVOValues
import Testing
@testable import KVOEngine

/// Issue 13, points 1 and 2: observing and setting whole documents, and
/// `changedKeyPath` on every event of a change made elsewhere.
@Suite final class WholeDocumentTests {
    let (fixture, client, writer) = EngineFixture.withTwoClients()

    @Test func observeWithoutKeyPathSendsTheWholeDocumentOnEveryChange() {
        let reply = fixture.ok(["op": "observe", "object": "p", "options": ["new", "old", "initial"]], from: client)
        expectJSON(reply.events, [["event": "change", "object": "p", "kind": "setting", "initial": true,
                                   "new": .null, "seq": 0]])
        fixture.ok(["op": "set", "object": "p", "keyPath": "address.city", "value": "Paris"], from: writer)
        fixture.ok(["op": "set", "object": "p", "value": ["name": "x"]], from: writer)
        fixture.ok(["op": "delete", "object": "p"], from: writer)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "p", "kind": "setting", "new": ["address": ["city": "Paris"]],
             "old": .null, "changedKeyPath": "address.city", "seq": 1],
            ["event": "change", "object": "p", "kind": "setting", "new": ["name": "x"],
             "old": ["address": ["city": "Paris"]], "seq": 2],
            ["event": "change", "object": "p", "kind": "setting", "new": .null, "old": ["name": "x"], "seq": 3],
        ])
    }

    @Test func setWithoutKeyPathReplacesTheDocumentAndKeyPathObserversSeeTheirPart() {
        fixture.ok(["op": "set", "object": "p", "keyPath": "a", "value": 1], from: writer)
        fixture.ok(["op": "observe", "object": "p", "keyPath": "a", "options": ["new", "old"]], from: client)
        fixture.ok(["op": "set", "object": "p", "value": ["a": 2, "b": 3]], from: writer)
        expectJSON(fixture.value("p"), ["a": 2, "b": 3])
        // The change was made at the whole document: no changedKeyPath.
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "p", "keyPath": "a", "kind": "setting", "new": 2, "old": 1, "seq": 2],
        ])
    }

    @Test func setWithoutKeyPathOfANonObjectIsNotAnObjectAndChangesNothing() {
        fixture.ok(["op": "set", "object": "p", "keyPath": "a", "value": 1], from: writer)
        for value: JSONValue in [3, "x", [1], .null, true] {
            fixture.fails(["op": "set", "object": "p", "value": value], from: writer, code: "not_an_object")
        }
        expectJSON(fixture.value("p"), ["a": 1])
        #expect(fixture.seq == 1)
    }

    @Test func wholeDocumentObservationIsListedWithoutKeyPathAndDedupedAndUnobservedByObject() {
        fixture.ok(["op": "observe", "object": "p"], from: client)
        fixture.ok(["op": "observe", "object": "p", "options": ["new"]], from: client)
        fixture.ok(["op": "observe", "object": "p", "keyPath": "a"], from: client)
        #expect(client.observationCount == 2)
        let listed = fixture.ok(["op": "observations"], from: client).reply.member("observations")
        expectJSON(listed, [["object": "p", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
                            ["object": "p", "keyPath": "a", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0]])
        fixture.ok(["op": "unobserve", "object": "p"], from: client)
        #expect(client.observationCount == 0)
        #expect(fixture.shared.observationCount == 0)
    }

    @Test func changedKeyPathNamesTheRequestsPathForAncestorsAndDescendantsOnly() {
        fixture.ok(["op": "set", "object": "p", "keyPath": "a.b", "value": ["c": 1]], from: writer)
        for path in ["a", "a.b", "a.b.c"] {
            fixture.ok(["op": "observe", "object": "p", "keyPath": .string(path), "options": ["new"]], from: client)
        }
        fixture.ok(["op": "set", "object": "p", "keyPath": "a.b", "value": ["c": 2]], from: writer)
        let byPath = Dictionary(uniqueKeysWithValues: fixture.take(from: client).events.map {
            ($0.eventKeyPath ?? "", $0.member("changedKeyPath"))
        })
        #expect(byPath["a"] == .some("a.b"))
        #expect(byPath["a.b"] == .some(nil))
        #expect(byPath["a.b.c"] == .some("a.b"))
    }

    @Test func priorAndOldOfAWholeDocumentObservation() {
        fixture.ok(["op": "set", "object": "p", "keyPath": "k", "value": 1], from: writer)
        fixture.ok(["op": "observe", "object": "p", "options": ["prior", "old"]], from: client)
        fixture.ok(["op": "insert", "object": "p", "keyPath": "list", "value": 5], from: writer)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "p", "kind": "setting", "prior": true, "old": ["k": 1],
             "changedKeyPath": "list", "seq": 2],
            ["event": "change", "object": "p", "kind": "setting", "old": ["k": 1], "changedKeyPath": "list",
             "seq": 2],
        ])
    }
}
