import KVOValues
import Testing
@testable import KVOEngine

/// Issue 15, point 3: the bookkeeping of a writer's wait (`await`), on a
/// clock the test moves, with the daemon's reports made by hand.
@Suite final class ChangeWaitTests {
    let (fixture, writer) = EngineFixture.withClient()
    var clock: ManualClock { fixture.clock }

    private func observer(_ extra: JSONObject = [:], keyPath: String = "a") -> ClientController {
        let client = fixture.makeClient()
        var request: JSONObject = ["op": "observe", "object": "o", "keyPath": .string(keyPath)]
        request.merge(extra) { _, new in new }
        fixture.ok(.object(request), from: client)
        return client
    }

    private func setAwaiting(_ condition: String, timeout: Int = 1000, keyPath: String = "a") -> WireOutput {
        fixture.send(["op": "set", "id": 7, "object": "o", "keyPath": .string(keyPath), "value": 1,
                      "await": .string(condition),
                      "awaitTimeout": .number(JSONNumber(timeout))], from: writer)
    }

    /// The daemon took an observer's output and the kernel took all of it.
    private func written(_ client: ClientController) {
        _ = fixture.take(from: client)
        client.outputReachedKernel(upTo: client.outputBytesTaken)
    }

    @Test func acknowledgedRepliesOnceEveryAckObservationOfAnotherClientAcked() {
        let first = observer(["ack": true])
        let second = observer(["ack": true])
        _ = observer()
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "ack": true], from: writer)
        #expect(setAwaiting("acknowledged").replies.isEmpty, "the reply waits")
        #expect(writer.isAwaiting && fixture.engine.awaitingWriters == 1)
        fixture.ok(["op": "ack", "seq": 1], from: first)
        #expect(fixture.take(from: writer).replies.isEmpty)
        fixture.ok(["op": "ack", "seq": 1], from: second)
        let reply = fixture.take(from: writer).reply
        #expect(reply == ["id": 7, "ok": true, "seq": 1, "observers": 2, "acknowledged": 2], "\(reply)")
        #expect(!writer.isAwaiting && fixture.engine.awaitingWriters == 0 && fixture.engine.nextAwaitDeadline == nil)
    }

    @Test func writtenRepliesOnceTheKernelTookEveryObserversEvent() {
        let first = observer()
        let second = observer()
        #expect(setAwaiting("written").events.isEmpty)
        written(first)
        // Less than the event: not yet.
        _ = fixture.take(from: second)
        second.outputReachedKernel(upTo: second.outputBytesTaken - 1)
        #expect(fixture.take(from: writer).isEmpty)
        second.outputReachedKernel(upTo: second.outputBytesTaken)
        let reply = fixture.take(from: writer).reply
        #expect(reply.member("observers") == 2 && reply.member("acknowledged") == 2, "\(reply)")
        #expect(first.waitParts == nil && second.waitParts == nil)
    }

    @Test func theDeadlineRepliesTimeoutWithTheCountsAndTakesThePartsBack() {
        let acking = observer(["ack": true])
        let silent = observer(["ack": true])
        #expect(setAwaiting("acknowledged", timeout: 250).isEmpty)
        #expect(fixture.engine.nextAwaitDeadline == 1_250)
        fixture.ok(["op": "ack", "seq": 1], from: acking)
        clock.advance(by: 249)
        fixture.engine.expireAwaits(at: clock.now.load(ordering: .relaxed))
        #expect(fixture.take(from: writer).isEmpty, "not before the deadline")
        clock.advance(by: 1)
        fixture.engine.expireAwaits(at: clock.now.load(ordering: .relaxed))
        let reply = fixture.take(from: writer).reply
        #expect(reply.errorCode == "timeout" && reply.member("id") == 7, "\(reply)")
        #expect(reply.member("error")?.member("observers") == 2 && reply.member("error")?.member("acknowledged") == 1,
                "\(reply)")
        #expect(fixture.store.seq == 1, "the change stays applied")
        // The silent observer keeps nothing of the finished wait.
        #expect(silent.waitParts == nil && fixture.engine.nextAwaitDeadline == nil)
    }

    @Test func aClosingObserverEndsItsPartUncountedAndAClosingWriterEndsItsWait() {
        let gone = observer(["ack": true])
        #expect(setAwaiting("acknowledged").isEmpty)
        fixture.engine.closeClient(gone)
        let reply = fixture.take(from: writer).reply
        #expect(reply.member("observers") == 1 && reply.member("acknowledged") == 0, "\(reply)")
        let silent = observer(["ack": true])
        #expect(setAwaiting("acknowledged").isEmpty)
        fixture.engine.closeClient(writer)
        #expect(fixture.engine.awaitingWriters == 0 && fixture.engine.nextAwaitDeadline == nil)
        #expect(silent.waitParts == nil)
    }

    @Test func filteredObservationsAreNotWaitedForAndThrottledOnesAreSettledUncounted() {
        _ = observer(["distinct": true])
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        let equal = setAwaiting("written")
        #expect(equal.reply.member("observers") == 0, "an equal value is no event for distinct: \(equal)")
        let throttled = observer(["throttle": 1000], keyPath: "b")
        fixture.ok(["op": "set", "object": "o", "keyPath": "b", "value": 2], from: writer)
        written(throttled)
        let folded = setAwaiting("written", keyPath: "b").reply
        #expect(folded.member("observers") == 1 && folded.member("acknowledged") == 0,
                "the throttled event was folded, not written: \(folded)")
    }
}
