import KVOValues
import Testing
@testable import KVOEngine

/// Issue 15, point 2: observations that send fewer events, `distinct` and
/// `kinds`, live, in `since` replay and in `observations`.
@Suite final class QuietObserverTests {
    let (fixture, client, writer) = EngineFixture.withTwoClients()

    @Test func distinctSkipsASetOfAnEqualValueAndItsPriorEvent() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "options": ["new", "prior"], "distinct": true],
                   from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["x": 1, "y": 2]], from: writer)
        // Equal as JSON: members in another order.
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["y": 2, "x": 1]], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 3], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 3], from: writer)
        let events = fixture.take(from: client).events.filter { $0.member("prior") == nil }
        #expect(events.map { $0.member("seq") } == [1, 3], "\(events)")
        #expect(fixture.take(from: client).isEmpty)
    }

    @Test func distinctAppliesToAncestorsAndDescendantsOfTheChangedPath() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1, "c": 1]], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPaths": ["a", "a.b"], "distinct": true], from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1, "c": 2]], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.c", "value": 2], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.c", "value": 5], from: writer)
        let events = fixture.take(from: client).events
        // a changed at seq 2 (a.b did not); nothing at 3; a at 4.
        #expect(events.map { "\($0.eventKeyPath ?? "")@\($0.member("seq")?.jsonString ?? "")" } == ["a@2", "a@4"])
    }

    @Test func kindsKeepsOnlyTheListedKinds() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "list", "kinds": ["insertion", "removal"]], from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "values": [1, 2]], from: writer)
        fixture.ok(["op": "replace", "object": "o", "keyPath": "list", "index": 0, "value": 9], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "list", "value": [7]], from: writer)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "list", "index": 0], from: writer)
        let kinds = fixture.take(from: client).events.map { $0.member("kind") }
        #expect(kinds == ["insertion", "removal"])
    }

    @Test func replayAppliesDistinctAndKinds() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 2], from: writer)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "l", "value": 1], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "l", "value": []], from: writer)
        let distinct = fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "distinct": true, "since": 0],
                                  from: client)
        #expect(distinct.events.map { $0.member("seq") } == [1, 3], "\(distinct)")
        let kinds = fixture.ok(["op": "observe", "object": "o", "keyPath": "l", "kinds": ["setting"], "since": 0],
                               from: client)
        #expect(kinds.events.map { $0.member("seq") } == [5], "\(kinds)")
    }

    @Test func observationsShowTheFilter() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "distinct": true, "kinds": ["replacement", "setting"],
                    "context": "c"], from: client)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "b", "distinct": false], from: client)
        let listed = fixture.ok(["op": "observations"], from: client).reply.member("observations")
        expectJSON(listed, [
            ["object": "o", "keyPath": "a", "options": [], "policy": "coalesce", "distinct": true,
             "kinds": ["setting", "replacement"], "context": "c", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
            ["object": "o", "keyPath": "b", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
        ])
    }

    @Test func badFilterFieldsAreRefusedAndObserveNothing() {
        fixture.fails(["op": "observe", "object": "o", "keyPath": "a", "distinct": 1], from: client, code: "bad_request")
        fixture.fails(["op": "observe", "object": "o", "keyPath": "a", "kinds": []], from: client, code: "bad_request")
        let bad = fixture.fails(["op": "observe", "object": "o", "keyPath": "a", "kinds": ["setting", "moving"]],
                                from: client, code: "bad_request")
        #expect(bad.reply.errorMessage?.contains("kinds[1]") == true)
        fixture.fails(["op": "get", "object": "o", "keyPath": "a", "distinct": true], from: client, code: "bad_request")
        #expect(client.observationCount == 0)
    }
}
