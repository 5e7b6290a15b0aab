import KVOValues
import Testing
@testable import KVOEngine

/// Pipelined change ops over a replicated store (docs/CLUSTER.md, "Pipelined
/// changes"): the change requests a client sent in a row are one proposal,
/// each answered on its own, in order, with what came after them behind.
extension ReplicationTests {
    /// What the daemon does once it has handled a read of each of `clients`,
    /// then at the loop turn's end. Returns whether the last awaits its changes.
    @discardableResult
    func endTurn(reading clients: ClientController...) -> Bool {
        var awaits = false
        for client in clients { awaits = fixture.engine.queuePipelinedChanges(of: client) }
        fixture.engine.proposeQueuedPipelines()
        return awaits
    }

    @Test func setsInARowAreOneProposalAndEachGetsItsReplyInOrderWithTheGetAfterThem() throws {
        fixture.engine.pipelinesChanges = true
        #expect(fixture.send(["op": "set", "id": 0, "object": "o", "keyPath": "a", "value": 1], from: writer).isEmpty)
        #expect(fixture.send(["op": "set", "id": 1, "object": "o", "keyPath": "a", "value": 2], from: writer).isEmpty)
        #expect(fixture.send(["op": "set", "id": 2, "object": "p", "keyPath": "y", "value": 3], from: writer).isEmpty)
        #expect(replicator.pendingBatches.isEmpty && replicator.pending.isEmpty, "nothing proposed before the read ends")
        #expect(endTurn(reading: writer) && writer.isAwaiting)
        #expect(fixture.send(["op": "get", "id": 3, "object": "o", "keyPath": "a"], from: writer).isEmpty,
                "a get read meanwhile waits for the sets before it")
        #expect(replicator.pending.isEmpty && replicator.pendingBatches.count == 1)
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(batch.objects == ["o", "p"] && batch.changes.map { $0.steps.map(\.position) } == [[0, 1], [2]])
        let steps = batch.changes.flatMap(\.steps)
        fixture.engine.applyReplicatedBatch(steps, documents: Dictionary(uniqueKeysWithValues: batch.changes.map {
            ($0.object, $0.document)
        }), seq: 12)
        replicator.pendingBatches.removeFirst().done(.applied(seq: 12))
        let replies = fixture.take(from: writer).replies
        #expect(replies.map { $0.member("id") } == [0, 1, 2, 3])
        #expect(replies.prefix(3).allSatisfy { $0.member("seq") == 12 && $0.member("seqs") == nil }, "\(replies)")
        #expect(replies.last?.member("value") == 2)
        #expect(!writer.isAwaiting)
        let told = fixture.take(from: watcher).events
        #expect(told.map { $0.member("new") } == [1, 2] && told.allSatisfy { $0.member("seq") == 12 })
    }

    @Test func anOpThatFailsIsAnsweredAloneAfterTheOnesBeforeItAndTheRestGoOn() throws {
        fixture.engine.pipelinesChanges = true
        _ = fixture.send(["op": "set", "id": 0, "object": "o", "keyPath": "a", "value": 1], from: writer)
        _ = fixture.send(["op": "set", "id": 1, "object": "o", "keyPath": "a", "value": 2, "ifValue": 7], from: writer)
        _ = fixture.send(["op": "set", "id": 2, "object": "o", "keyPath": "a", "value": 3], from: writer)
        #expect(endTurn(reading: writer))
        // The first goes alone (a group of one); the failing one waits behind it.
        let first = try #require(replicator.pending.first?.proposal)
        #expect(first.document.map(JSONValue.object) == ["a": 1] && replicator.pendingBatches.isEmpty)
        // Then the failing one is answered, and the one after it proposed, computed on the first's result.
        replicator.deliverAll(into: fixture.engine, from: 5)
        let output = fixture.take(from: writer).replies
        #expect(output.map { $0.member("id") } == [0, 1, 2], "\(output)")
        #expect(output.map { $0.member("seq") } == [5, nil, 6])
        #expect(output[1].member("error")?.member("code") == "precondition_failed")
        #expect(output[1].member("error")?.member("index") == nil, "its own error, not a batch's")
        #expect(fixture.value("o", "a") == 3 && !writer.isAwaiting)
    }

    @Test func aPipelineWhoseOutcomeIsUnknownIsToldSoAndNothingIsProposedAgain() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "l", "value": []], from: writer)
        replicator.deliverAll(into: fixture.engine, from: 2)
        _ = fixture.take(from: writer)
        fixture.engine.pipelinesChanges = true
        for index in 0..<3 {
            _ = fixture.send(["op": "insert", "id": .number(JSONNumber(index)), "object": "o", "keyPath": "l",
                              "value": .number(JSONNumber(index))], from: writer)
        }
        #expect(endTurn(reading: writer) && replicator.pendingBatches.count == 1)
        replicator.pendingBatches.removeFirst().done(.unknown("etcd did not tell; it may have been applied"))
        let replies = fixture.take(from: writer).replies
        #expect(replies.map { $0.member("id") } == [0, 1, 2], "\(replies)")
        #expect(replies.allSatisfy {
            $0.member("error")?.member("code") == "unavailable"
                && $0.member("error")?.member("message") == "etcd did not tell; it may have been applied"
        }, "\(replies)")
        #expect(replicator.pending.isEmpty && replicator.pendingBatches.isEmpty, "none proposed again")
        #expect(!writer.isAwaiting)
    }

    @Test func aPipelineThatChangedNothingForSureIsTriedAgainOpByOp() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "l", "value": []], from: writer)
        replicator.deliverAll(into: fixture.engine, from: 2)
        _ = fixture.take(from: writer)
        fixture.engine.pipelinesChanges = true
        for index in 0..<2 {
            _ = fixture.send(["op": "insert", "id": .number(JSONNumber(index)), "object": "o", "keyPath": "l",
                              "value": .number(JSONNumber(index))], from: writer)
        }
        #expect(endTurn(reading: writer) && replicator.pendingBatches.count == 1)
        replicator.pendingBatches.removeFirst().done(.unavailable("etcd refused it; nothing changed"))
        // Each alone, in order.
        #expect(replicator.pending.count == 1 && replicator.pendingBatches.isEmpty)
        // The first's outcome proposes the second, which deliverAll applies next.
        replicator.deliverAll(into: fixture.engine, from: 5)
        let replies = fixture.take(from: writer).replies
        #expect(replies.map { $0.member("seq") } == [5, 6], "\(replies)")
        #expect(fixture.value("o", "l") == [0, 1])
    }

    @Test func withoutPipeliningEachChangeIsProposedAtOnce() {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        #expect(replicator.pending.count == 1 && writer.isAwaiting)
        // A proposal left pending holds the engine that holds the replicator.
        replicator.deliverAll(into: fixture.engine, from: 2)
    }
}
