import KVOValues
import Testing
@testable import KVOEngine

/// Issue 13, point 3: observations of every object under a prefix.
@Suite final class PrefixObservationTests {
    let (fixture, client, writer) = EngineFixture.withTwoClients()

    private func set(_ object: String, _ keyPath: String, _ value: JSONValue) {
        fixture.ok(["op": "set", "object": .string(object), "keyPath": .string(keyPath), "value": value], from: writer)
    }

    @Test func prefixObservationHearsOfExistingAndLaterObjectsUnderItOnly() {
        set("services/web", "addr", "a")
        fixture.ok(["op": "observe", "prefix": "services/", "keyPath": "addr", "options": ["new"]], from: client)
        set("services/web", "addr", "b")
        set("services/db", "addr", "c")
        set("servicesX", "addr", "d")
        set("other", "addr", "e")
        set("services/db", "port", 1)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "services/web", "prefix": "services/", "keyPath": "addr",
             "kind": "setting", "new": "b", "seq": 2],
            ["event": "change", "object": "services/db", "prefix": "services/", "keyPath": "addr",
             "kind": "setting", "new": "c", "seq": 3],
        ])
    }

    @Test func initialSendsOneEventPerObjectInListOrderBeforeTheReply() {
        set("s/b", "addr", "2")
        set("s/a", "other", 0)
        set("s/c", "addr", "3")
        set("t/x", "addr", "no")
        let output = fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "addr", "options": ["new", "initial"]],
                                from: client)
        expectJSON(output.lines.dropLast().map { $0 }, [
            ["event": "change", "object": "s/a", "prefix": "s/", "keyPath": "addr", "kind": "setting",
             "initial": true, "new": .null, "seq": 4],
            ["event": "change", "object": "s/b", "prefix": "s/", "keyPath": "addr", "kind": "setting",
             "initial": true, "new": "2", "seq": 4],
            ["event": "change", "object": "s/c", "prefix": "s/", "keyPath": "addr", "kind": "setting",
             "initial": true, "new": "3", "seq": 4],
        ])
        #expect(output.lines.last?.member("ok") == true)
    }

    @Test func emptyPrefixWatchesEveryObjectAsWholeDocuments() {
        fixture.ok(["op": "observe", "prefix": "", "options": ["new"]], from: client)
        set("a", "k", 1)
        fixture.ok(["op": "delete", "object": "a"], from: writer)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "a", "prefix": "", "kind": "setting", "new": ["k": 1],
             "changedKeyPath": "k", "seq": 1],
            ["event": "change", "object": "a", "prefix": "", "kind": "setting", "new": .null, "seq": 2],
        ])
    }

    @Test func objectAndPrefixObservationsOfOneClientEachGetTheirEvent() {
        fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new"]], from: client)
        fixture.ok(["op": "observe", "prefix": "s", "keyPath": "k", "options": ["new"]], from: client)
        fixture.ok(["op": "observe", "object": "s/1", "keyPath": "k", "options": ["new"]], from: client)
        set("s/1", "k", 1)
        let events = fixture.take(from: client).events
        #expect(events.count == 3)
        #expect(Set(events.map { $0.member("prefix")?.jsonString ?? "none" }) == ["none", #""s/""#, #""s""#])
    }

    @Test func dedupeHoldsPerPrefixAndKeyPathAndUnobserveTakesPrefix() {
        fixture.ok(["op": "observe", "prefix": "s/", "keyPaths": ["a", "b"]], from: client)
        fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "a", "options": ["new"]], from: client)
        fixture.ok(["op": "observe", "prefix": "s/"], from: client)
        #expect(client.observationCount == 3)
        let listed = fixture.ok(["op": "observations"], from: client).reply.member("observations")
        // In the order they were made; the second observe of `a` made none.
        expectJSON(listed, [
            ["prefix": "s/", "keyPath": "a", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
            ["prefix": "s/", "keyPath": "b", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
            ["prefix": "s/", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
        ])
        fixture.ok(["op": "unobserve", "prefix": "s/", "keyPath": "a"], from: client)
        #expect(client.observationCount == 2)
        fixture.ok(["op": "unobserve", "prefix": "s/"], from: client)
        #expect(client.observationCount == 0)
        #expect(fixture.shared.observedPrefixCount == 0)
        set("s/1", "a", 1)
        #expect(fixture.take(from: client).lines.isEmpty)
    }

    @Test func prefixAndObjectTogetherOrAnOverlongPrefixAreRefused() {
        fixture.fails(["op": "observe", "prefix": "s/", "object": "s/1"], from: client, code: "bad_request")
        fixture.fails(["op": "unobserve", "prefix": "s/", "object": "s/1"], from: client, code: "bad_request")
        fixture.fails(["op": "observe", "prefix": .string(String(repeating: "p", count: 1025))], from: client,
                      code: "limit_exceeded")
        fixture.ok(["op": "observe", "prefix": .string(String(repeating: "p", count: 1024))], from: client)
        fixture.fails(["op": "get", "prefix": "s/"], from: client, code: "bad_request")
        fixture.fails(["op": "observe", "prefix": 3], from: client, code: "bad_request")
        #expect(client.observationCount == 1)
    }

    @Test func oneChangeAmongManyPrefixesOfOtherNamesVisitsOnlyItsOwnObservation() {
        let others = fixture.makeClient()
        for index in 0..<2000 {
            others.observe(.prefix("other/\(index)/"), keyPath: keyPath("k"), options: [.new], context: nil)
        }
        fixture.ok(["op": "observe", "prefix": "mine/", "keyPath": "k", "options": ["new"]], from: client)
        set("mine/1", "k", 1)
        #expect(fixture.shared.lastChangeVisits == 2)
        #expect(fixture.take(from: client).events.count == 1)
        #expect(fixture.take(from: others).lines.isEmpty)
        set("person", "k", 1)
        #expect(fixture.shared.lastChangeVisits == 0)
    }

    @Test func priorAndOldAndContextFollowTheSingleObjectRules() {
        set("s/1", "k", 1)
        fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new", "old", "prior"],
                    "context": "ctx"], from: client)
        set("s/1", "k", 2)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "s/1", "prefix": "s/", "keyPath": "k", "kind": "setting", "prior": true,
             "old": 1, "seq": 2, "context": "ctx"],
            ["event": "change", "object": "s/1", "prefix": "s/", "keyPath": "k", "kind": "setting", "new": 2,
             "old": 1, "seq": 2, "context": "ctx"],
        ])
    }

    @Test func congestedPrefixObservationHoldsTheLatestEventOfEachObject() throws {
        fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new"]], from: client)
        client.outputAllowance = 0
        for round in 0..<3 {
            for object in ["s/a", "s/b", "s/c"] { set(object, "k", .number(JSONNumber(round))) }
        }
        #expect(client.isCongested)
        _ = fixture.take(from: client)
        client.outputAllowance = nil
        client.markDrained()
        let released = fixture.take(from: client).events
        #expect(released.map { $0.member("object") } == ["s/a", "s/b", "s/c"])
        #expect(released.allSatisfy { $0.member("new") == 2 })
        #expect(released.map { $0.member("coalesced") }.allSatisfy { $0 != nil })
    }

    @Test func sinceReplaysEachObjectsMissedChangesInSeqOrder() {
        set("s/a", "k", 1)
        let resume = fixture.seq
        set("s/a", "k", 2)
        set("t/x", "k", 3)
        set("s/b", "k", 4)
        fixture.ok(["op": "delete", "object": "s/a"], from: writer)
        let output = fixture.ok(["op": "observe", "prefix": "s/", "keyPath": "k", "options": ["new", "old"],
                                 "since": .number(JSONNumber(Int(resume)))], from: client)
        expectJSON(output.events, [
            ["event": "change", "object": "s/a", "prefix": "s/", "keyPath": "k", "kind": "setting", "new": 2,
             "old": 1, "seq": 2],
            ["event": "change", "object": "s/b", "prefix": "s/", "keyPath": "k", "kind": "setting", "new": 4,
             "old": .null, "seq": 4],
            ["event": "change", "object": "s/a", "prefix": "s/", "keyPath": "k", "kind": "setting", "new": .null,
             "old": 2, "seq": 5],
        ])
    }

    @Test func replayedPrefixEventsAreTheLiveOnesByteForByte() {
        let live = fixture.makeClient()
        fixture.ok(["op": "observe", "prefix": "s/", "options": ["new", "old", "prior"]], from: live)
        let start = fixture.seq
        set("s/a", "x.y", 1)
        fixture.ok(["op": "insert", "object": "s/a", "keyPath": "x.list", "values": [1, 2]], from: writer)
        fixture.ok(["op": "set", "object": "s/b", "value": ["z": 1]], from: writer)
        fixture.ok(["op": "delete", "object": "s/a", "keyPath": "x.y"], from: writer)
        let liveLines = fixture.take(from: live).lines
        let replayed = fixture.ok(["op": "observe", "prefix": "s/", "options": ["new", "old", "prior"],
                                   "since": .number(JSONNumber(Int(start)))], from: client)
        #expect(replayed.events.map(\.jsonString) == liveLines.map(\.jsonString))
        #expect(liveLines.count == 8)
    }

    // Issue 33, row 7: a prefix and a name match by canonical equivalence, as
    // object names do; what is echoed is the spelling as sent or stored.
    static let nfc = "caf\u{e9}"
    static let nfd = "cafe\u{301}"

    @Test(arguments: [(nfc, nfd), (nfd, nfc)])
    func aPrefixHearsOfNamesSpelledInTheOtherForm(prefix: String, name: String) {
        fixture.ok(["op": "observe", "prefix": .string("\(prefix)/"), "keyPath": "k", "options": ["new"]], from: client)
        set("\(name)/a", "k", 1)
        set("\(name)", "k", 2)
        let events = fixture.take(from: client).events
        #expect(events.count == 1)
        #expect(events.first?.member("object").flatMap(Self.bytes) == Array("\(name)/a".utf8))
        #expect(events.first?.member("prefix").flatMap(Self.bytes) == Array("\(prefix)/".utf8))
    }

    @Test func listInitialAndReplayOfAPrefixFindNamesSpelledInTheOtherForm() {
        set("\(Self.nfd)/b", "k", 1)
        set("\(Self.nfc)/a", "k", 2)
        set("cafez", "k", 3)
        set("cafe", "k", 4)
        let stored = [Array("\(Self.nfc)/a".utf8), Array("\(Self.nfd)/b".utf8)]
        for prefix in ["\(Self.nfc)/", "\(Self.nfd)/", "\(Self.nfc)", "\(Self.nfd)"] {
            let listed = fixture.ok(["op": "list", "prefix": .string(prefix)], from: client).reply
            #expect(Self.names(listed.member("objects")) == stored, "prefix \(prefix.unicodeScalars.map(\.value))")
            // Paged one by one, from a name in either spelling.
            let first = fixture.ok(["op": "list", "prefix": .string(prefix), "limit": 1], from: client).reply
            #expect(Self.names(first.member("objects")) == [stored[0]] && first.member("more") == true)
            let rest = fixture.ok(["op": "list", "prefix": .string(prefix), "after": .string("\(Self.nfd)/a")],
                                  from: client).reply
            #expect(Self.names(rest.member("objects")) == [stored[1]] && rest.member("more") == false)
        }
        // `cafe` is not a prefix of `café`, in either spelling.
        let ascii = fixture.ok(["op": "list", "prefix": "cafe"], from: client).reply
        #expect(Self.names(ascii.member("objects")) == [Array("cafe".utf8), Array("cafez".utf8)])

        let initial = fixture.ok(["op": "observe", "prefix": .string("\(Self.nfc)/"), "keyPath": "k",
                                  "options": ["new", "initial"]], from: client)
        #expect(initial.events.compactMap { $0.member("object").flatMap(Self.bytes) } == stored)
        let replayed = fixture.ok(["op": "observe", "prefix": .string("\(Self.nfd)/"), "keyPath": "k",
                                   "options": ["new"], "since": 0], from: writer)
        #expect(replayed.events.compactMap { $0.member("object").flatMap(Self.bytes) } == stored.reversed())
    }

    private static func bytes(_ value: JSONValue) -> [UInt8]? {
        if case .string(let text) = value { Array(text.utf8) } else { nil }
    }

    private static func names(_ value: JSONValue?) -> [[UInt8]] {
        if case .array(let names)? = value { names.compactMap(bytes) } else { [] }
    }
}
