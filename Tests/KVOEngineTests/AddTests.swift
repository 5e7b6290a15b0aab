import KVOValues
import Testing
@testable import KVOEngine

/// `add` (docs/PROTOCOL.md, "Counters"): the integer at a key path plus
/// `by`, in one change, exact within ±2^53 and refused past it.
@Suite final class AddTests {
    let (fixture, client, observer) = EngineFixture.withTwoClients()
    static let limit = number("9007199254740992")

    private static func number(_ literal: String) -> JSONValue { .number(JSONNumber(validatedLiteral: literal)) }

    private func add(_ object: String, _ keyPath: String, _ by: JSONValue, _ extra: JSONObject = [:]) -> JSONValue {
        var members: JSONObject = ["op": "add", "object": .string(object), "keyPath": .string(keyPath), "by": by]
        members.merge(extra) { $1 }
        return .object(members)
    }

    @Test func aMissingValueCountsAsZeroAndTheObjectIsMadeAsASetMakesIt() {
        fixture.ok(["op": "observe", "object": "stats", "keyPath": "web.hits", "options": ["new", "old"]],
                   from: observer)
        let output = fixture.ok(add("stats", "web.hits", 5), from: client)
        expectJSON(output.reply, ["ok": true, "value": 5, "modSeq": 1, "seq": 1])
        #expect(fixture.value("stats") == ["web": ["hits": 5]])
        let events = fixture.take(from: observer).events
        #expect(events.count == 1 && events[0].member("kind") == "setting")
        #expect(events[0].member("old") == .null && events[0].member("new") == 5)
    }

    @Test func eachAddIsOneChangeWithItsOldAndNewValue() {
        fixture.ok(["op": "observe", "object": "c", "keyPath": "n", "options": ["new", "old"]], from: observer)
        fixture.ok(["op": "set", "object": "c", "keyPath": "n", "value": 10], from: client)
        for (by, sum) in [(1, 11), (-20, -9), (0, -9)] as [(JSONValue, JSONValue)] {
            let reply = fixture.ok(add("c", "n", by), from: client).reply
            #expect(reply.member("value") == sum && reply.member("seq") == reply.member("modSeq"))
        }
        let events = fixture.take(from: observer).events
        #expect(events.map { $0.member("new") } == [10, 11, -9, -9])
        #expect(events.map { $0.member("old") } == [.null, 10, 11, -9])
        #expect(events.map { $0.member("seq") } == [1, 2, 3, 4], "an add of 0 is a change, as a set of an equal value")
    }

    @Test func aValueThatIsNoIntegerIsRefusedNamingItAndNothingChanges() {
        fixture.ok(["op": "set", "object": "o", "value": ["s": "7", "z": .null, "a": [1], "f": Self.number("2.5"),
                                                          "e": Self.number("1e3"), "d": ["n": 1]]], from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "one", "value": Self.number("1.0")],
                   from: client)
        fixture.ok(["op": "observe", "object": "o", "options": ["new"]], from: observer)
        let seq = fixture.seq
        for (key, said) in [("s", "o s is string, not a number"), ("z", "o z is null, not a number"),
                            ("a", "o a is array, not a number"), ("d", "o d is object, not a number"),
                            ("f", "o f is 2.5, not an integer"), ("one", "o one is 1.0, not an integer"),
                            ("e", "o e is 1e3, not an integer")] {
            let message = fixture.fails(add("o", key, 1), from: client, code: "bad_request").reply.errorMessage ?? ""
            #expect(message.hasPrefix(said) && message.hasSuffix("nothing changed"), "\(message)")
        }
        fixture.fails(add("o", "s.deeper", 1), from: client, code: "not_an_object")
        #expect(fixture.seq == seq && fixture.take(from: observer).isEmpty)
    }

    @Test func integersStayExactUpTo2To53AndAnAddPastItIsRefused() {
        fixture.ok(add("c", "n", Self.limit), from: client)
        #expect(fixture.value("c", "n") == Self.limit)
        let message = fixture.fails(add("c", "n", 1), from: client, code: "bad_request").reply.errorMessage ?? ""
        #expect(message.contains("would be 9007199254740993 (9007199254740992 + 1), past 2^53"), "\(message)")
        #expect(fixture.value("c", "n") == Self.limit && fixture.seq == 1)
        let lowest = Self.number("-9007199254740992")
        fixture.ok(add("c", "n", lowest), from: client)
        fixture.ok(add("c", "n", lowest), from: client)
        #expect(fixture.value("c", "n") == lowest)
        fixture.fails(add("c", "n", -1), from: client, code: "bad_request")
        // A value set past it, by a set, is refused as it stands.
        fixture.ok(["op": "set", "object": "c", "keyPath": "big", "value": Self.number("9007199254740993")],
                   from: client)
        let past = fixture.fails(add("c", "big", -1), from: client, code: "bad_request").reply.errorMessage ?? ""
        #expect(past.hasPrefix("c big is 9007199254740993, past 2^53"), "\(past)")
    }

    @Test func byMustBeAnIntegerWithin2To53() {
        for by in ["9007199254740993", "-9007199254740993", "1.5", "1.0", "1e2", "123456789012345678901234567890"] {
            let message = fixture.fails(add("c", "n", Self.number(by)), from: client,
                                        code: "bad_request").reply.errorMessage
            #expect(message?.hasPrefix("field \"by\" must be an integer") == true, "\(by): \(message ?? "")")
        }
        fixture.fails(add("c", "n", "1"), from: client, code: "bad_request")
        fixture.fails(["op": "add", "object": "c", "keyPath": "n"], from: client, code: "bad_request")
        fixture.fails(["op": "add", "object": "c", "by": 1], from: client, code: "bad_request")
        fixture.fails(["op": "set", "object": "c", "keyPath": "n", "value": 1, "by": 1], from: client,
                      code: "bad_request")
        fixture.fails(add("c", "tags.@count", 1), from: client, code: "bad_request")
        #expect(fixture.seq == 0)
    }

    @Test func aKeyPathTooLongForTheNestingLimitIsRefusedAsForASet() {
        let deepest = Array(repeating: "k", count: DocumentDepth.limit).joined(separator: ".")
        fixture.ok(add("deep", deepest, 1), from: client)
        let message = fixture.fails(add("deep", deepest + ".k", 1), from: client, code: "bad_request").reply
            .errorMessage ?? ""
        #expect(message.contains("deeper than 512 levels"), "\(message)")
        #expect(fixture.seq == 1)
    }

    @Test func conditionsHoldAsForASetOrNothingChanges() {
        fixture.ok(add("c", "n", 1, ["ifModSeq": 0]), from: client)
        let refused = fixture.fails(add("c", "n", 1, ["ifModSeq": 0]), from: client, code: "precondition_failed")
        #expect(refused.reply.member("error")?.member("modSeq") == 1)
        fixture.fails(add("c", "n", 1, ["ifValue": 5]), from: client, code: "precondition_failed")
        fixture.ok(add("c", "n", 1, ["ifValue": 1, "ifModSeq": 1]), from: client)
        #expect(fixture.value("c", "n") == 2 && fixture.seq == 2)
    }

    @Test func inABatchEachAddSeesWhatTheOpsBeforeItLeftAndTheReplyTellsEachSum() {
        fixture.ok(["op": "observe", "object": "c", "keyPath": "n", "options": ["new", "old"]], from: observer)
        let reply = fixture.ok(["op": "batch", "ops": [
            add("c", "n", 2), ["op": "set", "object": "c", "keyPath": "m", "value": 1], add("c", "n", 3),
        ]], from: client).reply
        expectJSON(reply, ["ok": true, "seq": 3, "seqs": [1, 2, 3], "values": [2, .null, 5]])
        #expect(fixture.take(from: observer).events.map { $0.member("new") } == [2, 5])
        // All or nothing: an add that fails undoes the ops before it.
        fixture.ok(["op": "set", "object": "c", "keyPath": "s", "value": "x"], from: client)
        let failed = fixture.fails(["op": "batch", "ops": [add("c", "n", 1), add("c", "s", 1)]], from: client,
                                   code: "bad_request")
        #expect(failed.reply.member("error")?.member("index") == 1)
        #expect(fixture.value("c", "n") == 5 && fixture.seq == 4)
        // A batch without an add replies as before.
        #expect(fixture.ok(["op": "batch", "ops": [["op": "delete", "object": "c", "keyPath": "m"]]],
                           from: client).reply.member("values") == nil)
    }

    @Test func anAddIsASetOfTheSumForLeasesTooTtlRenewsAndNoneEndsIt() {
        fixture.ok(add("rate", "ip1", 1, ["ttl": 60]), from: client)
        #expect(fixture.send(["op": "get", "object": "rate", "keyPath": "ip1"], from: client).reply
            .member("expiresIn") == 60)
        fixture.ok(add("rate", "ip1", 1, ["ttl": 30]), from: client)
        #expect(fixture.send(["op": "get", "object": "rate", "keyPath": "ip1"], from: client).reply
            .member("expiresIn") == 30)
        fixture.ok(add("rate", "ip1", 1), from: client)
        let reply = fixture.send(["op": "get", "object": "rate", "keyPath": "ip1"], from: client).reply
        #expect(reply.member("value") == 3 && reply.member("expiresIn") == nil)
        fixture.ok(add("presence", "n", 1, ["ephemeral": true]), from: observer)
        #expect(fixture.engine.valuesOwned(by: observer) == 1)
    }

    @Test func itNeedsTheRightToReadAndToWriteTheObject() {
        let fixture = EngineFixture(configuration: EngineConfiguration(accessPolicy: AccessPolicy(grants: [
            .init(.user(1000), objectPrefix: "rw/", rights: .all),
            .init(.user(1000), objectPrefix: "w/", rights: .write),
            .init(.user(1000), objectPrefix: "r/", rights: .read),
        ])))
        let client = fixture.makeClient()
        client.credentials = PeerCredentials(pid: 2, uid: 1000, gid: 1000)
        fixture.ok(add("rw/c", "n", 1), from: client)
        for object in ["w/c", "r/c", "none"] {
            fixture.fails(add(object, "n", 1), from: client, code: "forbidden")
        }
        let inBatch = fixture.fails(["op": "batch", "ops": [add("rw/c", "n", 1), add("w/c", "n", 1)]], from: client,
                                    code: "forbidden")
        #expect(inBatch.reply.member("error")?.member("index") == 1)
        #expect(fixture.seq == 1)
    }

    @Test func requestCountsAndMetricsNameIt() {
        fixture.ok(add("c", "n", 1), from: client)
        #expect(fixture.engine.requestCounts.count(of: "add") == 1)
    }
}
