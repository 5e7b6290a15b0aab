import KVOValues
import Testing
@testable import KVOEngine

/// Issue 14, point 3: `batch`, all or nothing.
@Suite final class BatchTests {
    let (fixture, client, observer) = EngineFixture.withTwoClients()

    @Test func opsRunInOrderEachSeeingTheLastAndEachNotifyingWithItsOwnState() {
        fixture.ok(["op": "insert", "object": "queue", "keyPath": "pending", "values": ["job1", "job2"]], from: client)
        fixture.ok(["op": "observe", "object": "queue", "options": ["new"]], from: observer)
        let output = fixture.ok(["op": "batch", "id": 1, "ops": [
            ["op": "remove", "object": "queue", "keyPath": "pending", "index": 0, "ifValue": ["job1", "job2"]],
            ["op": "insert", "object": "queue", "keyPath": "running", "value": "job1"],
            ["op": "delete", "object": "nothing"],
            ["op": "set", "object": "queue", "keyPath": "moved", "value": 1, "ifModSeq": 0],
        ]], from: client)
        expectJSON(output.reply, ["id": 1, "ok": true, "seq": 4, "seqs": [2, 3, .null, 4]])
        let events = fixture.take(from: observer).events
        #expect(events.map { $0.member("seq") } == [2, 3, 4])
        #expect(events[0].member("new") == ["pending": ["job2"]])
        #expect(events[1].member("new") == ["pending": ["job2"], "running": ["job1"]])
        #expect(fixture.value("queue") == ["pending": ["job2"], "running": ["job1"], "moved": 1])
    }

    @Test func aFailingOpAppliesNoneConsumesNoSeqAndNotifiesNobody() {
        fixture.ok(["op": "set", "object": "a", "keyPath": "k", "value": 1], from: client)
        fixture.ok(["op": "observe", "prefix": "", "options": ["new"]], from: observer)
        let refused = fixture.fails(["op": "batch", "ops": [
            ["op": "set", "object": "a", "keyPath": "k", "value": 2],
            ["op": "set", "object": "b", "keyPath": "k", "value": 2],
            ["op": "set", "object": "a", "keyPath": "k", "value": 3, "ifModSeq": 1],
        ]], from: client, code: "precondition_failed")
        #expect(refused.reply.member("error")?.member("index") == 2)
        // Issue 33 row 9: the modSeq the client can read (1), not the trial's 2, which never existed.
        #expect(refused.reply.member("error")?.member("modSeq") == 1)
        #expect(refused.reply.member("error")?.member("message")
            == "ops[2]: a k is changed by an earlier op of this batch (its modSeq is 1)")
        #expect(fixture.seq == 1)
        #expect(fixture.value("a", "k") == 1 && fixture.value("b") == nil)
        #expect(fixture.take(from: observer).lines.isEmpty)
        let notArray = fixture.fails(["op": "batch", "ops": [
            ["op": "set", "object": "a", "keyPath": "k", "value": 1],
            ["op": "insert", "object": "a", "keyPath": "k", "value": 1],
        ]], from: client, code: "not_an_array")
        #expect(notArray.reply.member("error")?.member("index") == 1)
    }

    @Test func aConditionThatFailsOnItsOwnInABatchTellsTheModSeqHeld() {
        fixture.ok(["op": "set", "object": "a", "keyPath": "k", "value": 1], from: client)
        let refused = fixture.fails(["op": "batch", "ops": [
            ["op": "set", "object": "b", "keyPath": "k", "value": 2],
            ["op": "set", "object": "a", "keyPath": "k", "value": 3, "ifModSeq": 7],
        ]], from: client, code: "precondition_failed")
        #expect(refused.reply.member("error")?.member("modSeq") == 1)
        #expect(refused.reply.member("error")?.member("message") == "ops[1]: a k has modSeq 1, not 7")
    }

    @Test func malformedBatchesAreRefusedNamingTheOp() {
        fixture.fails(["op": "batch", "ops": []], from: client, code: "bad_request")
        fixture.fails(["op": "batch"], from: client, code: "bad_request")
        fixture.fails(["op": "batch", "ops": 3], from: client, code: "bad_request")
        let getOp = fixture.fails(["op": "batch", "ops": [["op": "set", "object": "a", "keyPath": "k", "value": 1],
                                                           ["op": "get", "object": "a"]]],
                                  from: client, code: "bad_request")
        #expect(getOp.reply.member("error")?.member("index") == 1)
        let withId = fixture.fails(["op": "batch", "ops": [["op": "delete", "object": "a", "id": 1]]], from: client,
                                   code: "bad_request")
        #expect(withId.reply.member("error")?.member("index") == 0)
        let missing = fixture.fails(["op": "batch", "ops": [["op": "set", "object": "a", "value": 1]]], from: client,
                                    code: "not_an_object")
        #expect(missing.reply.member("error")?.member("index") == 0)
        let many = JSONValue.array(Array(repeating: ["op": "delete", "object": "a"], count: 10_001))
        fixture.fails(["op": "batch", "ops": many], from: client, code: "limit_exceeded")
        #expect(fixture.seq == 0)
    }

    @Test func aBatchOfTenThousandOpsIsOneRequest() {
        let ops = JSONValue.array((0..<10_000).map { ["op": "set", "object": "o", "keyPath": .string("k\($0 % 100)"),
                                                      "value": .number(JSONNumber($0))] })
        let reply = fixture.ok(["op": "batch", "ops": ops], from: client).reply
        #expect(reply.member("seq") == 10_000)
        #expect(fixture.value("o", "k99") == 9_999)
    }

    /// A hostile run: 2,000 removes at index 0 of 3,000,000 elements held the loop 21.5 s.
    @Test func aBatchThatWouldMoveTooManyArrayElementsIsRefusedWholeAndOneOpWithManyIndexesIsNot() {
        let count = 200_000
        let elements = JSONValue.array((0..<count).map { .number(JSONNumber($0)) })
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": elements], from: client)
        // Each remove at index 0 moves what follows it: 90 of them move more than 2^24.
        let removes = JSONValue.array(Array(repeating: ["op": "remove", "object": "o", "keyPath": "a", "index": 0],
                                            count: 90))
        let refused = fixture.fails(["op": "batch", "ops": removes], from: client, code: "limit_exceeded")
        let error = refused.reply.member("error")
        #expect(error?.member("limit") == .number(JSONNumber(Engine.maxBatchElementsMoved)))
        // Op k moves 200,000 - k elements: ops 0...82 move 16,596,597 in all, op 83 passes 2^24.
        #expect(error?.member("index") == 83, "\(String(describing: error))")
        let message = error?.member("message")?.stringValue
        #expect(message?.hasPrefix("ops[83]: this batch would move more than 16777216 array elements") == true)
        #expect(fixture.seq == 1)
        // Appends move nothing; a remove near the end moves little; one op with many indexes is one pass.
        let appends = JSONValue.array(Array(repeating: ["op": "insert", "object": "o", "keyPath": "a", "value": 1],
                                            count: 1_000))
        fixture.ok(["op": "batch", "ops": appends], from: client)
        let nearTheEnd = JSONValue.array(Array(repeating: ["op": "remove", "object": "o", "keyPath": "a",
                                                           "index": .number(JSONNumber(count))], count: 1_000))
        fixture.ok(["op": "batch", "ops": nearTheEnd], from: client)
        fixture.ok(["op": "batch", "ops": [["op": "remove", "object": "o", "keyPath": "a",
                                            "indexes": .array((0..<90).map { .number(JSONNumber($0)) })]]], from: client)
        guard case .array(let left)? = fixture.value("o", "a") else { return #expect(Bool(false)) }
        #expect(left.count == count - 90)
        #expect(left.first == 90)
    }

    @Test func aBatchWithAForbiddenOpIsRefusedWhole() {
        let policy = AccessPolicy(grants: [.init(.user(1000), objectPrefix: "mine/", rights: .all)])
        let guarded = EngineFixture(configuration: EngineConfiguration(accessPolicy: policy))
        let user = guarded.makeClient()
        user.credentials = PeerCredentials(pid: 1, uid: 1000, gid: 1000)
        let refused = guarded.fails(["op": "batch", "ops": [
            ["op": "set", "object": "mine/a", "keyPath": "k", "value": 1],
            ["op": "set", "object": "theirs/a", "keyPath": "k", "value": 1],
        ]], from: user, code: "forbidden")
        #expect(refused.reply.member("error")?.member("index") == 1)
        #expect(guarded.seq == 0)
    }
}
