import KVOValues
import Testing
@testable import KVOEngine

/// `await` over a replicated store (docs/CLUSTER.md, "await over etcd"), with
/// a replicator the test drives: the change's record carries a token; when
/// the revision that carries it is applied, this engine's observers are
/// gathered and the reply waits for them, as in local mode.
@Suite final class ReplicatedAwaitTests {
    let (fixture, writer, watcher) = EngineFixture.withTwoClients()
    let replicator = ScriptedReplicator()

    init() {
        fixture.engine.replicator = replicator
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "ack": true], from: watcher)
    }

    private func setAwaiting(_ condition: String, id: Int = 7) {
        let output = fixture.send(["op": "set", "id": .number(JSONNumber(id)), "object": "o", "keyPath": "a",
                                   "value": 1, "await": .string(condition), "awaitTimeout": 1000], from: writer)
        #expect(output.isEmpty && writer.isAwaiting)
    }

    @Test func anAwaitedChangeRepliesOnceTheObserversOfThisReplicaAckedTheRevisionThatCarriedItsToken() throws {
        setAwaiting("acknowledged")
        let proposal = try #require(replicator.pending.first?.proposal)
        let token = try #require(proposal.change.context.awaitID, "the record carries the token")
        #expect(ReplicatedChange(object: "o", json: proposal.change.json)?.context.awaitID == token)
        replicator.deliverAll(into: fixture.engine, from: 12)
        #expect(fixture.take(from: writer).isEmpty && writer.isAwaiting, "applied: the reply waits for the ack")
        #expect(fixture.take(from: watcher).events.map { $0.member("seq") } == [12])
        fixture.ok(["op": "ack", "seq": 12], from: watcher)
        expectJSON(fixture.take(from: writer).reply, ["id": 7, "ok": true, "seq": 12, "observers": 1, "acknowledged": 1])
        #expect(!writer.isAwaiting && fixture.engine.awaitedProposals.isEmpty)
    }

    @Test func theWaitStartsWhenTheRevisionIsAppliedAndItsReplyGoesWithAnOutcomeThatComesAfterTheAck() throws {
        setAwaiting("acknowledged")
        let proposal = try #require(replicator.pending.first)
        // The watch delivers the revision before etcd's answer to the Txn.
        fixture.engine.applyReplicated(proposal.proposal.change, document: proposal.proposal.document, seq: 5)
        fixture.ok(["op": "ack", "seq": 5], from: watcher)
        // The daemon reads the writer again once a reply went: the reply waits for the outcome.
        #expect(fixture.take(from: writer).isEmpty && writer.isAwaiting && fixture.engine.awaitingWriters == 0)
        replicator.answer(.unavailable("etcd did not answer (the request may have been applied)"))
        expectJSON(fixture.take(from: writer).reply, ["id": 7, "ok": true, "seq": 5, "observers": 1, "acknowledged": 1])
        #expect(!writer.isAwaiting)
    }

    @Test func anotherReplicasTokenOrNoneStartsNoWait() {
        var theirs = ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting)
        theirs.context.awaitID = 42
        fixture.engine.applyReplicated(theirs, document: ["a": 2], seq: 3)
        #expect(fixture.engine.awaitingWriters == 0)
        #expect(fixture.take(from: watcher).events.count == 1)
    }

    @Test func anAwaitedChangeWhoseObserverDoesNotAckTimesOutWithTheCountsAndStaysApplied() {
        setAwaiting("acknowledged")
        replicator.deliverAll(into: fixture.engine, from: 9)
        fixture.clock.advance(by: 1000)
        fixture.engine.expireAwaits(at: fixture.clock.now.load(ordering: .relaxed))
        let error = fixture.take(from: writer).reply.member("error")
        #expect(error?.member("code") == "timeout" && error?.member("seq") == 9, "\(String(describing: error))")
        #expect(error?.member("observers") == 1 && error?.member("acknowledged") == 0)
        #expect(fixture.value("o", "a") == 1)
    }

    @Test func anAwaitedBatchWaitsForEveryEventOfItsRevisionAndALostRaceProposesANewToken() throws {
        fixture.ok(["op": "observe", "object": "p", "keyPath": "b"], from: watcher)
        _ = fixture.send(["op": "batch", "id": 3, "await": "written", "ops": [
            ["op": "set", "object": "o", "keyPath": "a", "value": 1],
            ["op": "set", "object": "p", "keyPath": "b", "value": 2],
        ]], from: writer)
        let first = try #require(replicator.pendingBatches.first)
        let lost = try #require(first.batch.context.awaitID)
        replicator.pendingBatches.removeFirst()
        first.done(.conflict)
        let token = try #require(replicator.pendingBatches.first?.batch.context.awaitID)
        #expect(token != lost && fixture.engine.awaitedProposals.count == 1)
        replicator.deliverBatch(into: fixture.engine, at: 20)
        #expect(fixture.take(from: writer).isEmpty)
        _ = fixture.take(from: watcher)
        watcher.outputReachedKernel(upTo: watcher.outputBytesTaken)
        expectJSON(fixture.take(from: writer).reply,
                   ["id": 3, "ok": true, "seq": 20, "seqs": [20, 20], "observers": 2, "acknowledged": 2])
    }

    @Test func anAwaitedDeleteOfNothingRepliesAtOnceWithNoObserver() {
        let reply = fixture.send(["op": "delete", "id": 1, "object": "none", "await": "acknowledged"], from: writer).reply
        expectJSON(reply, ["id": 1, "ok": true, "seq": 0, "observers": 0, "acknowledged": 0])
        #expect(replicator.pending.isEmpty && !writer.isAwaiting)
    }
}
