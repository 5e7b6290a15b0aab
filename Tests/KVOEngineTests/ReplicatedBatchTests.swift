import KVOValues
import Testing
@testable import KVOEngine

/// `batch` over a replicated store (docs/CLUSTER.md): one proposal for the
/// whole batch, one object write however many ops change it, and every
/// replica replaying the ops in order to tell each op's events as local mode
/// does, all at the revision's seq.
@Suite struct ReplicatedBatchTests {
    /// Computed, not a `static let`: a global `JSONValue` keeps its pointers with enum tag bits,
    /// which LeakSanitizer does not take for pointers (it reported them leaked under ASan).
    static var ops: JSONValue { [
        ["op": "set", "object": "a", "keyPath": "x", "value": 1],
        ["op": "delete", "object": "b", "keyPath": "gone"],
        ["op": "insert", "object": "b", "keyPath": "list", "values": [1, 2, 3]],
        ["op": "set", "object": "a", "keyPath": "x", "value": 2],
        ["op": "remove", "object": "b", "keyPath": "list", "index": 0],
        ["op": "set", "object": "a", "keyPath": "y", "value": ["z": true]],
    ] }

    @Test func aBatchIsOneProposalWhoseReplayTellsEachOpAsLocalModeDoesAtTheRevisionsSeq() throws {
        let replicated = EngineFixture()
        let replicator = ScriptedReplicator()
        replicated.engine.replicator = replicator
        let (writer, watcher) = (replicated.makeClient(), replicated.makeClient())
        let local = EngineFixture()
        let (localWriter, localWatcher) = (local.makeClient(), local.makeClient())
        for client in [watcher, localWatcher] {
            for (object, path) in [("a", "x"), ("b", "list"), ("a", "y")] {
                _ = client.observe(object, keyPath: keyPath(path), options: [.new, .old], context: nil)
            }
        }
        #expect(replicated.send(["op": "batch", "id": 3, "ops": Self.ops], from: writer).isEmpty && writer.isAwaiting)
        #expect(replicated.value("a", "x") == nil, "nothing applied by the proposal")
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(batch.objects == ["a", "b"])
        #expect(batch.changes.map(\.object) == ["a", "b"])
        #expect(batch.changes.map { $0.steps.map(\.position) } == [[0, 3, 5], [2, 4]])
        // Only a step that a later one of its object hides says what it wrote.
        #expect(batch.changes[0].steps.map(\.written) == [1, 2, nil])
        #expect(batch.changes[0].document.map(JSONValue.object) == ["x": 2, "y": ["z": true]])

        // Through the store's records, as every kvod reads them back.
        var steps: [ReplicatedBatchStep] = []
        for change in batch.changes {
            steps += try #require(ReplicatedBatchStep.steps(object: change.object,
                                                             record: ReplicatedBatchStep.record(change.steps)))
        }
        #expect(steps == batch.changes.flatMap(\.steps))
        replicated.engine.applyReplicatedBatch(steps, documents: Dictionary(uniqueKeysWithValues: batch.changes.map {
            ($0.object, $0.document)
        }), seq: 40)
        replicator.pendingBatches.removeFirst().done(.applied(seq: 40))
        expectJSON(replicated.take(from: writer).reply, ["id": 3, "ok": true, "seq": 40,
                                                         "seqs": [40, nil, 40, 40, 40, 40]])

        let localReply = local.send(["op": "batch", "ops": Self.ops], from: localWriter).reply
        expectJSON(localReply.member("seqs"), [1, nil, 2, 3, 4, 5])
        let told = replicated.take(from: watcher).events
        let localTold = local.take(from: localWatcher).events
        #expect(told.count == 5 && told.allSatisfy { $0.member("seq") == 40 })
        func withoutSeq(_ events: [JSONValue]) -> [JSONValue] {
            events.map { event in
                guard case .object(var members) = event else { return event }
                members["seq"] = nil
                return .object(members)
            }
        }
        #expect(withoutSeq(told) == withoutSeq(localTold))
        #expect(replicated.engine.store.document("a") == local.engine.store.document("a"))
        #expect(replicated.engine.store.document("b") == local.engine.store.document("b"))
    }

    @Test func aBatchWhoseConditionFailsOnTheReplicaIsRefusedWithItsIndexAndProposesNothing() {
        let fixture = EngineFixture()
        let replicator = ScriptedReplicator()
        fixture.engine.replicator = replicator
        let writer = fixture.makeClient()
        let reply = fixture.send(["op": "batch", "ops": [
            ["op": "set", "object": "a", "keyPath": "x", "value": 1],
            ["op": "set", "object": "b", "keyPath": "x", "value": 1, "ifModSeq": 7],
        ]], from: writer).reply
        #expect(reply.member("error")?.member("code") == "precondition_failed")
        #expect(reply.member("error")?.member("index") == 1)
        #expect(replicator.pendingBatches.isEmpty && !writer.isAwaiting)
    }

    @Test func theHistoryHoldsTheChangesOfOneRevisionAllOrNone() {
        let history = ChangeHistory(capacity: 4)
        func change(_ seq: UInt64) -> ChangeRecord {
            ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: seq, existingKeys: 0)
        }
        for seq: UInt64 in [5, 10, 10, 10, 12] { history.append(change(seq)) }
        #expect(history.all.map(\.seq) == [10, 10, 10, 12])
        history.append(change(13))
        #expect(history.all.map(\.seq) == [12, 13], "a revision partly forgotten is forgotten whole")
        #expect(history.changes(after: 11).map(\.seq) == [12, 13])
        // A revision with more changes than the history holds is never held in part.
        for _ in 0..<5 { history.append(change(20)) }
        #expect(history.all.isEmpty && history.oldestSeq == nil)
        history.append(change(21))
        #expect(history.all.map(\.seq) == [21])
    }
}
