import KVOValues
import Testing
@testable import KVOEngine

/// Which observations a change reaches, with what, and how the index is kept.
@Suite struct SharedControllerTests {
    let fixture = EngineFixture()

    private func write(_ request: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
        let writer = fixture.makeClient()
        fixture.ok(request, from: writer, sourceLocation: sourceLocation)
        fixture.engine.closeClient(writer)
    }

    private func observe(_ client: ClientController, _ object: String, _ path: String,
                         _ options: ObservationOptions = [.new, .old]) {
        #expect(client.observe(object, keyPath: keyPath(path), options: options, context: nil) != nil)
    }

    // MARK: Matching

    @Test func changeAtObservedPathReachesItWithChangeKind() {
        write(["op": "set", "object": "o", "keyPath": "list", "value": ["a", "b"]])
        let client = fixture.makeClient()
        observe(client, "o", "list")

        write(["op": "insert", "object": "o", "keyPath": "list", "index": 1, "values": ["x", "y"]])
        write(["op": "replace", "object": "o", "keyPath": "list", "index": 0, "value": "z"])
        write(["op": "remove", "object": "o", "keyPath": "list", "indexes": [1, 3]])
        write(["op": "set", "object": "o", "keyPath": "list", "value": []])
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "list", "kind": "insertion", "new": ["x", "y"],
             "indexes": [1, 2], "seq": 2],
            ["event": "change", "object": "o", "keyPath": "list", "kind": "replacement", "new": ["z"], "old": ["a"],
             "indexes": [0], "seq": 3],
            ["event": "change", "object": "o", "keyPath": "list", "kind": "removal", "old": ["x", "b"],
             "indexes": [1, 3], "seq": 4],
            ["event": "change", "object": "o", "keyPath": "list", "kind": "setting", "new": [], "old": ["z", "y"],
             "seq": 5],
        ])
    }

    @Test func changeAboveObservedPathReachesDescendantAsSettingWithItsOwnValues() {
        write(["op": "set", "object": "o", "keyPath": "a", "value": ["b": ["c": 1, "d": 0]]])
        let client = fixture.makeClient()
        observe(client, "o", "a.b.c")
        observe(client, "o", "a.b.e")

        write(["op": "set", "object": "o", "keyPath": "a", "value": ["b": ["c": 2, "e": 3]]])
        write(["op": "set", "object": "o", "keyPath": "a", "value": 7])
        let events = fixture.take(from: client).events
        let byPath = Dictionary(grouping: events) { $0.member("keyPath")?.jsonString ?? "" }
        expectJSON(byPath[#""a.b.c""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a.b.c", "kind": "setting", "new": 2, "old": 1,
             "changedKeyPath": "a", "seq": 2],
            ["event": "change", "object": "o", "keyPath": "a.b.c", "kind": "setting", "new": .null, "old": 2,
             "changedKeyPath": "a", "seq": 3],
        ])
        expectJSON(byPath[#""a.b.e""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a.b.e", "kind": "setting", "new": 3, "old": .null,
             "changedKeyPath": "a", "seq": 2],
            ["event": "change", "object": "o", "keyPath": "a.b.e", "kind": "setting", "new": .null, "old": 3,
             "changedKeyPath": "a", "seq": 3],
        ])
        #expect(events.count == 4)
    }

    @Test func changeBelowObservedPathReachesAncestorAsSettingWithItsOwnValues() {
        write(["op": "set", "object": "o", "keyPath": "a.b.c", "value": 1])
        let client = fixture.makeClient()
        observe(client, "o", "a")
        observe(client, "o", "a.b")

        write(["op": "set", "object": "o", "keyPath": "a.b.c", "value": 2])
        let events = fixture.take(from: client).events
        #expect(events.count == 2)
        let byPath = Dictionary(grouping: events) { $0.member("keyPath")?.jsonString ?? "" }
        expectJSON(byPath[#""a""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": ["b": ["c": 2]],
             "old": ["b": ["c": 1]], "changedKeyPath": "a.b.c", "seq": 2],
        ])
        expectJSON(byPath[#""a.b""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a.b", "kind": "setting", "new": ["c": 2],
             "old": ["c": 1], "changedKeyPath": "a.b.c", "seq": 2],
        ])
    }

    @Test func collectionChangeBelowObservedPathReachesAncestorAsSettingWithoutIndexes() {
        write(["op": "set", "object": "o", "keyPath": "a.list", "value": [1]])
        let client = fixture.makeClient()
        observe(client, "o", "a")

        write(["op": "insert", "object": "o", "keyPath": "a.list", "value": 2])
        write(["op": "remove", "object": "o", "keyPath": "a.list", "index": 0])
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": ["list": [1, 2]],
             "old": ["list": [1]], "changedKeyPath": "a.list", "seq": 2],
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": ["list": [2]],
             "old": ["list": [1, 2]], "changedKeyPath": "a.list", "seq": 3],
        ])
    }

    @Test func collectionChangeAboveObservedPathReachesDescendantAsSettingWithNullValues() {
        write(["op": "set", "object": "o", "keyPath": "list", "value": [1]])
        let client = fixture.makeClient()
        observe(client, "o", "list.x")

        write(["op": "insert", "object": "o", "keyPath": "list", "value": 2])
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "list.x", "kind": "setting", "new": .null, "old": .null,
             "changedKeyPath": "list", "seq": 2],
        ])
    }

    @Test func changeElsewhereReachesNothing() {
        write(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1, "c": 1]])
        let client = fixture.makeClient()
        observe(client, "o", "a.b")       // sibling of the changed path
        observe(client, "o", "ab")        // shares a prefix of text, not of keys
        observe(client, "o", "x")         // another branch
        observe(client, "oo", "a.c")      // same path, object whose name extends "o"
        observe(client, "p", "a.c")       // same path, another object
        observe(client, "p", "a")

        write(["op": "set", "object": "o", "keyPath": "a.c", "value": 2])
        write(["op": "insert", "object": "o", "keyPath": "a.list", "value": 2])
        write(["op": "delete", "object": "o", "keyPath": "a.c"])
        #expect(fixture.take(from: client).isEmpty)
    }

    @Test func deleteObjectReachesEveryObservationOfItAsSetting() {
        write(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1]])
        let client = fixture.makeClient()
        observe(client, "o", "a")
        observe(client, "o", "a.b")
        observe(client, "o", "z")
        observe(client, "p", "a")

        write(["op": "delete", "object": "o"])
        let events = fixture.take(from: client).events
        let byPath = Dictionary(grouping: events) { $0.member("keyPath")?.jsonString ?? "" }
        #expect(events.count == 3)
        expectJSON(byPath[#""a""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": .null, "old": ["b": 1],
             "seq": 2],
        ])
        expectJSON(byPath[#""a.b""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "a.b", "kind": "setting", "new": .null, "old": 1,
             "seq": 2],
        ])
        expectJSON(byPath[#""z""#] ?? [], [
            ["event": "change", "object": "o", "keyPath": "z", "kind": "setting", "new": .null, "old": .null,
             "seq": 2],
        ])
    }

    @Test func changeReachesObservationsOfEveryClientWithTheirOwnOptions() {
        let plain = fixture.makeClient()
        let newOnly = fixture.makeClient()
        let oldOnly = fixture.makeClient()
        let both = fixture.makeClient()
        write(["op": "set", "object": "o", "keyPath": "a", "value": 1])
        plain.observe("o", keyPath: keyPath("a"), options: [], context: "p")
        newOnly.observe("o", keyPath: keyPath("a"), options: [.new], context: nil)
        oldOnly.observe("o", keyPath: keyPath("a"), options: [.old], context: ["c": 1])
        both.observe("o", keyPath: keyPath("a"), options: [.new, .old, .prior], context: nil)

        write(["op": "set", "object": "o", "keyPath": "a", "value": 2])
        expectJSON(fixture.take(from: plain).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "seq": 2, "context": "p"],
        ])
        expectJSON(fixture.take(from: newOnly).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 2, "seq": 2],
        ])
        expectJSON(fixture.take(from: oldOnly).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "old": 1, "seq": 2,
             "context": ["c": 1]],
        ])
        expectJSON(fixture.take(from: both).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "prior": true, "old": 1, "seq": 2],
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 2, "old": 1, "seq": 2],
        ])
    }

    /// The node remembers which encodings its observations read: one that
    /// leaves, and one that comes after, must not cost the others their event.
    @Test func observationsLeavingAndJoiningKeepEveryoneElsesEncoding() {
        let newOnly = fixture.makeClient()
        let leaving = fixture.makeClient()
        write(["op": "set", "object": "o", "keyPath": "a", "value": 1])
        observe(newOnly, "o", "a", [.new])
        observe(leaving, "o", "a", [.new, .old])
        write(["op": "set", "object": "o", "keyPath": "a", "value": 2])
        leaving.unobserve("o", keyPath: keyPath("a"))
        write(["op": "set", "object": "o", "keyPath": "a", "value": 3])
        let oldOnly = fixture.makeClient()
        observe(oldOnly, "o", "a", [.old])
        write(["op": "set", "object": "o", "keyPath": "a", "value": 4])

        expectJSON(fixture.take(from: newOnly).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 2, "seq": 2],
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 3, "seq": 3],
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 4, "seq": 4],
        ])
        expectJSON(fixture.take(from: leaving).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 2, "old": 1, "seq": 2],
        ])
        expectJSON(fixture.take(from: oldOnly).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "old": 3, "seq": 4],
        ])
    }

    // MARK: Index upkeep

    @Test func unobserveWhenLastObservationGoesEmptiesIndex() {
        let one = fixture.makeClient()
        let two = fixture.makeClient()
        observe(one, "o", "a")
        observe(one, "o", "a.b.c")
        observe(two, "o", "a.b")
        observe(two, "o", "x.y")
        observe(two, "p", "q")
        #expect(fixture.shared.observationCount == 5)
        #expect(fixture.shared.debugDescription.split(separator: "\n").count == 6)

        one.unobserve("o", keyPath: keyPath("a.b.c"))
        #expect(fixture.shared.observationCount == 4)
        #expect(fixture.shared.isObserved("o"))
        one.unobserveAll()
        two.unobserve("o", keyPath: keyPath("a.b"))
        #expect(fixture.shared.isObserved("o"))
        two.unobserve("o")
        #expect(!fixture.shared.isObserved("o"))
        #expect(fixture.shared.isObserved("p"))
        two.unobserve("p", keyPath: keyPath("q"))

        #expect(fixture.shared.observationCount == 0)
        #expect(!fixture.shared.isObserved("p"))
        let rows = fixture.shared.debugDescription.split(separator: "\n")
        #expect(rows == ["<SharedController observations:0>"])
    }

    @Test func unobserveLeafKeepsObservationsAboveAndBesideIt() {
        let client = fixture.makeClient()
        observe(client, "o", "a", [.new])
        observe(client, "o", "a.b", [.new])
        observe(client, "o", "a.b.c", [.new])
        observe(client, "o", "a.d", [.new])
        client.unobserve("o", keyPath: keyPath("a.b.c"))
        client.unobserve("o", keyPath: keyPath("a"))

        write(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1, "d": 2]])
        let paths = Set(fixture.take(from: client).events.compactMap(\.eventKeyPath))
        #expect(paths == ["a.b", "a.d"])
    }

    @Test func debugDescriptionListsEachRegistration() {
        let client = fixture.makeClient()
        observe(client, "o", "a.b", [.new, .prior])
        observe(client, "p", "c", [])
        let rows = fixture.shared.debugDescription.split(separator: "\n").map(String.init)
        #expect(rows.first == "<SharedController observations:2>")
        #expect(rows.dropFirst().sorted() == [#"  o a.b ["new", "prior"]"#, "  p c []"])
    }

    // MARK: Cost

    /// 100,000 observations that a change does not match: events reach only
    /// the three that do, and the change visits exactly as many nodes and
    /// observations as it does with none of them registered.
    @Test func changeWhenManyOtherObservationsReachesOnlyMatchingOnes() {
        let watcher = fixture.makeClient()
        let crowd = fixture.makeClient()
        let writer = fixture.makeClient()
        observe(watcher, "o", "a")         // ancestor
        observe(watcher, "o", "a.b")       // the changed path
        observe(watcher, "o", "a.b.c")     // descendant

        fixture.ok(["op": "set", "object": "o", "keyPath": "a.b", "value": ["c": 1]], from: writer)
        let alone = fixture.shared.lastChangeVisits
        #expect(alone > 0)
        _ = fixture.take(from: watcher)

        for i in 0..<25_000 {
            crowd.observe("other\(i)", keyPath: keyPath("a.b"), options: [.new], context: nil)  // other objects
            crowd.observe("o", keyPath: keyPath("a.x\(i)"), options: [.new], context: nil)   // siblings of a.b
            crowd.observe("o", keyPath: keyPath("k\(i).a.b"), options: [.new], context: nil)  // other branches
            crowd.observe("o", keyPath: keyPath("a.bb\(i)"), options: [.new], context: nil)  // text prefix a.b…
        }
        #expect(fixture.shared.observationCount == 100_003)

        fixture.ok(["op": "set", "object": "o", "keyPath": "a.b", "value": ["c": 1]], from: writer)
        let events = fixture.take(from: watcher).events
        #expect(events.count == 3)
        #expect(Set(events.compactMap(\.eventKeyPath)) == ["a", "a.b", "a.b.c"])
        #expect(crowd.output.isEmpty)
        #expect(fixture.shared.lastChangeVisits == alone,
                "a change visited \(fixture.shared.lastChangeVisits) nodes/observations with 100,000 others registered, \(alone) without")
    }
}
