import KVOValues
import Testing
@testable import KVOEngine

/// Issue 14, points 1 and 2: every value's modSeq, and writes that apply
/// only if it (or the value) is what the client read.
@Suite final class ConditionalWriteTests {
    let (fixture, client, observer) = EngineFixture.withTwoClients()

    private func modSeq(_ object: String, _ keyPath: String? = nil) -> JSONValue? {
        var request: JSONObject = ["op": "get", "object": .string(object)]
        if let keyPath { request["keyPath"] = .string(keyPath) }
        let reply = fixture.send(.object(request), from: client).reply
        return reply.member("modSeq") ?? reply.member("error")?.member("modSeq")
    }

    @Test func modSeqIsTheLastChangeAtOrUnderAValueOrAtAnAncestorThatReplacedIt() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.b", "value": 1], from: client)           // 1
        #expect([modSeq("o", "a.b"), modSeq("o", "a"), modSeq("o")] == [1, 1, 1])
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 1, "c": 2]], from: client)  // 2
        #expect([modSeq("o", "a.b"), modSeq("o", "a.c"), modSeq("o", "a")] == [2, 2, 2])
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.c", "value": 3], from: client)            // 3
        fixture.ok(["op": "set", "object": "o", "keyPath": "x", "value": 1], from: client)              // 4
        #expect([modSeq("o", "a.b"), modSeq("o", "a.c"), modSeq("o", "a"), modSeq("o")] == [2, 3, 3, 4])
        fixture.ok(["op": "delete", "object": "o", "keyPath": "a.c"], from: client)                     // 5
        #expect([modSeq("o", "a.c"), modSeq("o", "a"), modSeq("o", "a.b")] == [0, 5, 2])
        fixture.ok(["op": "insert", "object": "o", "keyPath": "a.list", "values": [1]], from: client)    // 6
        #expect([modSeq("o", "a.list"), modSeq("o", "a"), modSeq("o", "x")] == [6, 6, 4])
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.c", "value": 7], from: client)            // 7
        #expect(modSeq("o", "a.c") == 7)
        fixture.ok(["op": "set", "object": "o", "value": ["x": 1, "a": ["b": 1]]], from: client)         // 8
        #expect([modSeq("o", "a.b"), modSeq("o", "x"), modSeq("o")] == [8, 8, 8])
        #expect([modSeq("o", "nothing"), modSeq("none")] == [0, 0])
        fixture.ok(["op": "delete", "object": "o"], from: client)                                       // 9
        fixture.ok(["op": "set", "object": "o", "keyPath": "n.m", "value": 1], from: client)            // 10
        #expect([modSeq("o", "a"), modSeq("o", "n"), modSeq("o")] == [0, 10, 10])
    }

    @Test func ifModSeqZeroCreatesOnlyWhenNothingIsThere() {
        fixture.ok(["op": "observe", "object": "lock", "keyPath": "owner", "options": ["new"]], from: observer)
        fixture.ok(["op": "set", "object": "lock", "keyPath": "owner", "value": "a", "ifModSeq": 0], from: client)
        _ = fixture.take(from: observer)
        let refused = fixture.fails(["op": "set", "object": "lock", "keyPath": "owner", "value": "b", "ifModSeq": 0,
                                     "id": 9], from: client, code: "precondition_failed")
        #expect(refused.reply.member("error")?.member("modSeq") == 1)
        #expect(refused.reply.member("id") == 9)
        #expect(fixture.seq == 1)
        #expect(fixture.value("lock", "owner") == "a")
        #expect(fixture.take(from: observer).lines.isEmpty)
    }

    @Test func ifModSeqAppliesOnlyAtTheModSeqTheClientRead() {
        fixture.ok(["op": "set", "object": "c", "keyPath": "n", "value": 1], from: client)
        fixture.ok(["op": "set", "object": "c", "keyPath": "n", "value": 2, "ifModSeq": 1], from: client)
        fixture.fails(["op": "set", "object": "c", "keyPath": "n", "value": 3, "ifModSeq": 1], from: client,
                      code: "precondition_failed")
        fixture.fails(["op": "delete", "object": "c", "keyPath": "n", "ifModSeq": 1], from: client,
                      code: "precondition_failed")
        fixture.ok(["op": "delete", "object": "c", "ifModSeq": 2], from: client)
        #expect(fixture.value("c") == nil)
    }

    @Test func ifValueComparesAsJSONNumbersByValueAndObjectsInAnyOrder() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "n", "value": .number(JSONNumber(validatedLiteral: "1.50"))],
                   from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "n", "value": 2,
                    "ifValue": .number(JSONNumber(validatedLiteral: "15e-1"))], from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "m", "value": ["a": 1, "b": [1, ["c": nil]]]], from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "m", "value": 0, "ifValue": ["b": [1, ["c": nil]], "a": .number(JSONNumber(validatedLiteral: "1.0"))]],
                   from: client)
        fixture.fails(["op": "set", "object": "o", "keyPath": "m", "value": 1, "ifValue": "0"], from: client,
                      code: "precondition_failed")
        fixture.ok(["op": "set", "object": "o", "keyPath": "z", "value": nil], from: client)
        fixture.ok(["op": "set", "object": "o", "keyPath": "z", "value": 1, "ifValue": nil], from: client)
        fixture.fails(["op": "set", "object": "o", "keyPath": "missing", "value": 1, "ifValue": nil], from: client,
                      code: "precondition_failed")
        #expect(fixture.value("o") == ["n": 2, "m": 0, "z": 1])
    }

    @Test func conditionsGuardCollectionOps() {
        fixture.ok(["op": "insert", "object": "q", "keyPath": "jobs", "values": ["a", "b"], "ifModSeq": 0], from: client)
        fixture.fails(["op": "remove", "object": "q", "keyPath": "jobs", "index": 0, "ifValue": ["b", "a"]],
                      from: client, code: "precondition_failed")
        fixture.ok(["op": "remove", "object": "q", "keyPath": "jobs", "index": 0, "ifValue": ["a", "b"]], from: client)
        fixture.ok(["op": "replace", "object": "q", "keyPath": "jobs", "index": 0, "value": "c", "ifModSeq": 2],
                   from: client)
        #expect(fixture.value("q", "jobs") == ["c"])
    }

    @Test func badConditionsAreBadRequests() {
        fixture.fails(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ifModSeq": -1], from: client,
                      code: "bad_request")
        fixture.fails(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ifModSeq": "1"], from: client,
                      code: "bad_request")
        fixture.fails(["op": "get", "object": "o", "ifModSeq": 0], from: client, code: "bad_request")
        fixture.fails(["op": "observe", "object": "o", "ifValue": 0], from: client, code: "bad_request")
        #expect(fixture.seq == 0)
    }

    @Test func numbersCompareByExactValue() {
        func same(_ a: String, _ b: String) -> Bool {
            JSONValue.number(JSONNumber(validatedLiteral: a)).isEquivalent(to: .number(JSONNumber(validatedLiteral: b)))
        }
        #expect(same("1", "1.0") && same("100", "1e2") && same("0.001", "1E-3") && same("-0", "0") && same("0.0", "0e5"))
        #expect(!same("1", "-1") && !same("123456789012345678901", "123456789012345678902") && !same("1", "10"))
    }
}
