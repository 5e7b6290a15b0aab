import KVOValues
import Testing
@testable import KVOEngine

/// `add` over a replicated store: the kvod that takes it computes the sum on
/// its replica and proposes the document that holds it, so every kvod applies
/// the same value; a lost race is computed again from the newer value.
extension ReplicationTests {
    @Test func anAddIsProposedAsTheDocumentWithItsSumAndAnsweredWithItOnceApplied() throws {
        replicator.deliverAll(into: fixture.engine, from: 1)
        fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting),
                                       document: ["a": 40], seq: 3)
        _ = fixture.take(from: watcher)
        #expect(fixture.send(["op": "add", "id": 1, "object": "o", "keyPath": "a", "by": 2], from: writer).isEmpty)
        let proposal = try #require(replicator.pending.first?.proposal)
        #expect(proposal.change == ReplicatedChange(op: "add", object: "o", path: ["a"], kind: .setting))
        #expect(proposal.document.map(JSONValue.object) == ["a": 42])
        replicator.deliverAll(into: fixture.engine, from: 9)
        expectJSON(fixture.take(from: writer).reply, ["id": 1, "ok": true, "value": 42, "modSeq": 9, "seq": 9])
        let events = fixture.take(from: watcher).events
        #expect(events.map { $0.member("old") } == [40] && events.map { $0.member("new") } == [42])
    }

    @Test func anAddThatLostItsRaceIsComputedAgainFromTheValueThatWon() throws {
        _ = fixture.send(["op": "add", "object": "o", "keyPath": "a", "by": 1], from: writer)
        #expect(replicator.pending.first?.proposal.document.map(JSONValue.object) == ["a": 1])
        // Another kvod's add wins; the replica applies it, then the proposal is told.
        fixture.engine.applyReplicated(ReplicatedChange(op: "add", object: "o", path: ["a"], kind: .setting),
                                       document: ["a": 10], seq: 5)
        replicator.answer(.conflict)
        #expect(replicator.pending.first?.proposal.document.map(JSONValue.object) == ["a": 11])
        replicator.deliverAll(into: fixture.engine, from: 6)
        expectJSON(fixture.take(from: writer).reply, ["ok": true, "value": 11, "modSeq": 6, "seq": 6])
        #expect(fixture.take(from: watcher).events.map { $0.member("new") } == [10, 11])
    }

    @Test func pipelinedAddsAreOneProposalAndEachReplyTellsItsOwnSum() throws {
        fixture.engine.pipelinesChanges = true
        for id in 0..<3 {
            _ = fixture.send(["op": "add", "id": .number(JSONNumber(id)), "object": "o", "keyPath": "a", "by": 5],
                             from: writer)
        }
        _ = fixture.send(["op": "set", "id": 3, "object": "o", "keyPath": "b", "value": 0], from: writer)
        #expect(endTurn(reading: writer))
        #expect(replicator.pendingBatches.count == 1 && replicator.pending.isEmpty)
        replicator.deliverBatch(into: fixture.engine, at: 7)
        let replies = fixture.take(from: writer).replies
        expectJSON(replies, [["id": 0, "ok": true, "value": 5, "modSeq": 7, "seq": 7],
                             ["id": 1, "ok": true, "value": 10, "modSeq": 7, "seq": 7],
                             ["id": 2, "ok": true, "value": 15, "modSeq": 7, "seq": 7],
                             ["id": 3, "ok": true, "seq": 7]])
        #expect(fixture.take(from: watcher).events.map { $0.member("new") } == [5, 10, 15])
        #expect(fixture.value("o", "a") == 15)
    }

    @Test func aBatchWithAddsOverTheStoreRepliesWithEachSum() throws {
        _ = fixture.send(["op": "batch", "ops": [["op": "add", "object": "o", "keyPath": "a", "by": 2],
                                                 ["op": "add", "object": "o", "keyPath": "a", "by": 3],
                                                 ["op": "set", "object": "p", "keyPath": "x", "value": 1]]],
                         from: writer)
        replicator.deliverBatch(into: fixture.engine, at: 4)
        expectJSON(fixture.take(from: writer).reply, ["ok": true, "seq": 4, "seqs": [4, 4, 4], "values": [2, 5, .null]])
        let events = fixture.take(from: watcher).events
        #expect(events.map { $0.member("new") } == [2, 5] && events.map { $0.member("old") } == [.null, 2])
    }
}
