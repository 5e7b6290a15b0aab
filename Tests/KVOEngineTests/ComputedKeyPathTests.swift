import KVOValues
import Testing
@testable import KVOEngine

/// Issue 15, point 1: KVC's collection operators as computed key paths,
/// read with `get`, observed, never written.
@Suite final class ComputedKeyPathTests {
    let (fixture, client, writer) = EngineFixture.withTwoClients()

    @Test func getAnswersEachOperatorOverAnArrayOfObjectsSkippingNonNumbers() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "orders",
                    "value": [["amount": 5], ["amount": number("2.5")], ["amount": "x"], ["other": 1], ["amount": -1]]],
                   from: writer)
        expectJSON(fixture.value("o", "orders.@count"), 5)
        expectJSON(fixture.value("o", "orders.@sum.amount"), number("6.5"))
        expectJSON(fixture.value("o", "orders.@avg.amount"), number("2.1666666666666665"))
        expectJSON(fixture.value("o", "orders.@min.amount"), -1)
        expectJSON(fixture.value("o", "orders.@max.amount"), 5)
    }

    @Test func emptyOrMissingArrayGivesZeroCountAndSumAndNullOtherwise() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "tags", "value": []], from: writer)
        for path in ["tags", "missing", "deeper.missing"] {
            expectJSON(fixture.value("o", "\(path).@count"), 0)
            expectJSON(fixture.value("o", "\(path).@sum"), 0)
            expectJSON(fixture.value("o", "\(path).@avg"), .null)
            expectJSON(fixture.value("o", "\(path).@min"), .null)
            expectJSON(fixture.value("o", "\(path).@max"), .null)
        }
        expectJSON(fixture.value("nothing", "tags.@count"), 0)
    }

    @Test func anAtSignIsOtherwiseAnOrdinaryKey() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "@home.@x", "value": 1], from: writer)
        expectJSON(fixture.value("o", "@home.@x"), 1)
    }

    @Test func writingAComputedKeyPathIsABadRequestAndChangesNothing() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "tags", "value": ["a"]], from: writer)
        let refused: [JSONValue] = [
            ["op": "set", "object": "o", "keyPath": "tags.@count", "value": 3],
            ["op": "set", "id": 1, "object": "o", "keyPath": "tags.@count", "value": 3],
            ["op": "delete", "object": "o", "keyPath": "tags.@count"],
            ["op": "insert", "object": "o", "keyPath": "orders.@sum.amount", "value": 3],
            ["op": "remove", "object": "o", "keyPath": "tags.@max", "index": 0],
            ["op": "replace", "object": "o", "keyPath": "tags.@min", "index": 0, "value": 1],
            ["op": "batch", "ops": [["op": "set", "object": "o", "keyPath": "n", "value": 1],
                                    ["op": "set", "object": "o", "keyPath": "tags.@avg", "value": 1]]],
        ]
        for request in refused {
            let output = fixture.fails(request, from: writer, code: "bad_request")
            #expect(output.reply.errorMessage?.contains("cannot be written") == true, "\(output)")
        }
        #expect(fixture.seq == 1)
        expectJSON(fixture.value("o"), ["tags": ["a"]])
    }

    @Test func malformedComputedKeyPathsAreRefusedForReadingAndObserving() {
        for path in ["tags.@count.x", "a.@sum.b.@max"] {
            fixture.fails(["op": "get", "object": "o", "keyPath": .string(path)], from: client, code: "bad_request")
            fixture.fails(["op": "observe", "object": "o", "keyPath": .string(path)], from: client, code: "bad_request")
        }
        #expect(client.observationCount == 0)
    }

    @Test func anInsertGivesACountEventWithTheArrayAsChangedKeyPath() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "tags.@count", "options": ["new", "old", "initial"]],
                   from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "tags", "values": ["a", "b"]], from: writer)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "tags", "index": 0], from: writer)
        fixture.ok(["op": "delete", "object": "o"], from: writer)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "tags.@count", "kind": "setting", "new": 2, "old": 0,
             "changedKeyPath": "tags", "seq": 1],
            ["event": "change", "object": "o", "keyPath": "tags.@count", "kind": "setting", "new": 1, "old": 2,
             "changedKeyPath": "tags", "seq": 2],
            ["event": "change", "object": "o", "keyPath": "tags.@count", "kind": "setting", "new": 0, "old": 1,
             "seq": 3],
        ])
    }

    @Test func sumFollowsInsertRemoveReplaceAndSetOfTheArray() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "orders", "value": [["amount": 1], ["amount": 2]]],
                   from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "orders.@sum.amount", "options": ["new", "old"]],
                   from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "orders", "index": 1, "values": [["amount": 10], "x"]],
                   from: writer)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "orders", "indexes": [0, 2]], from: writer)
        fixture.ok(["op": "replace", "object": "o", "keyPath": "orders", "index": 0, "value": ["amount": 100]],
                   from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "orders", "value": [["amount": 7]]], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "other", "value": 1], from: writer)
        let events = fixture.take(from: client).events
        #expect(events.map { $0.member("new") } == [13, 12, 102, 7], "\(events)")
        #expect(events.map { $0.member("old") } == [3, 13, 12, 102], "\(events)")
        #expect(events.allSatisfy { $0.member("kind") == "setting" && $0.member("changedKeyPath") == "orders" })
        expectJSON(fixture.value("o", "orders.@sum.amount"), 7)
    }

    @Test func minAndMaxFollowTheRemovalOfTheExtreme() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "n", "value": [3, 1, 4, 1, 5]], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPaths": ["n.@min", "n.@max", "n.@avg"], "options": ["new"]],
                   from: client)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "n", "indexes": [1, 4]], from: writer)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "n", "value": number("-2.5")], from: writer)
        let events = fixture.take(from: client).events
        let byPath = Dictionary(grouping: events) { $0.eventKeyPath ?? "" }
        #expect(byPath["n.@min"]?.map { $0.member("new") } == [1, number("-2.5")])
        #expect(byPath["n.@max"]?.map { $0.member("new") } == [4, 4])
        #expect(byPath["n.@avg"]?.map { $0.member("new") } == [
            number("2.6666666666666665"), number("1.375"),
        ])
    }

    @Test func aChangeToOneElementOfALargeArrayMakesOnePassSharedByItsObserversThenNone() {
        let count = 100_000
        fixture.ok(["op": "set", "object": "o", "keyPath": "v", "value": .array((0..<count).map { .number(JSONNumber($0)) })],
                   from: writer)
        let observers = (0..<20).map { _ in fixture.makeClient() }
        for observer in observers {
            fixture.ok(["op": "observe", "object": "o", "keyPath": "v.@sum", "options": ["new", "old"]], from: observer)
        }
        let sum = count * (count - 1) / 2
        fixture.ok(["op": "replace", "object": "o", "keyPath": "v", "index": 7, "value": 1007], from: writer)
        #expect(fixture.shared.lastChangeArrayPasses == 1)
        // Kept up to date from then on: no pass at all.
        fixture.ok(["op": "remove", "object": "o", "keyPath": "v", "index": 9], from: writer)
        #expect(fixture.shared.lastChangeArrayPasses == 0)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "v", "index": 0, "value": 5], from: writer)
        #expect(fixture.shared.lastChangeArrayPasses == 0)
        for observer in observers {
            let events = fixture.take(from: observer).events
            #expect(events.map { $0.member("old") } == [sum, sum + 1000, sum + 991].map { .number(JSONNumber($0)) })
            #expect(events.map { $0.member("new") } == [sum + 1000, sum + 991, sum + 996].map { .number(JSONNumber($0)) })
        }
        expectJSON(fixture.value("o", "v.@sum"), .number(JSONNumber(sum + 996)))
    }

    @Test func aKeptAggregateIsDroppedWhenTheArrayIsSetOrTheKeyPathObservedAgain() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "v", "value": [1, 2, 3]], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPaths": ["v.@sum", "v.@sum.x"], "options": ["new"]], from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "v", "value": 4], from: writer)
        fixture.ok(["op": "set", "object": "o", "keyPath": "v", "value": [10]], from: writer)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "v", "value": 1], from: writer)
        var events = fixture.take(from: client).events
        // Unobserved while the array changes, then observed again.
        fixture.ok(["op": "unobserve", "object": "o", "keyPath": "v.@sum"], from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "v", "value": 100], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "v.@sum", "options": ["new"]], from: client)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "v", "value": 1000], from: writer)
        events += fixture.take(from: client).events
        let sums = events.filter { $0.eventKeyPath == "v.@sum" }.map { $0.member("new") }
        #expect(sums == [10, 10, 11, 1111])
    }

    @Test func replayedEventsCarryTheComputedValuesAsOfEachChange() {
        fixture.ok(["op": "insert", "object": "o", "keyPath": "tags", "values": ["a"]], from: writer)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "tags", "values": ["b", "c"]], from: writer)
        let reply = fixture.ok(["op": "observe", "object": "o", "keyPath": "tags.@count", "options": ["new", "old"],
                                "since": 0], from: client)
        fixture.ok(["op": "remove", "object": "o", "keyPath": "tags", "index": 0], from: writer)
        let replayed = reply.events + fixture.take(from: client).events
        #expect(replayed.map { $0.member("new") } == [1, 3, 2], "\(replayed)")
        #expect(replayed.map { $0.member("old") } == [0, 1, 3], "\(replayed)")
    }
}

/// A JSON number from its literal (the value literals take integers only).
private func number(_ literal: String) -> JSONValue {
    .number(JSONNumber(validatedLiteral: literal))
}
