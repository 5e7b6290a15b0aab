import KVOValues
import Testing
@testable import KVOEngine

/// The engine over a replicated store (docs/CLUSTER.md), with a replicator the
/// test drives: a change op is proposed, not applied; it is applied when the
/// store delivers it, at the store's revision; the writer hears after that.
@Suite struct ReplicationTests {
    let fixture = EngineFixture()
    let replicator = ScriptedReplicator()
    let writer: ClientController
    let watcher: ClientController

    init() {
        fixture.engine.replicator = replicator
        writer = fixture.makeClient()
        watcher = fixture.makeClient()
        _ = watcher.observe("o", keyPath: keyPath("a"), options: [.new, .old], context: nil)
    }

    @Test func aSetIsProposedWithTheNewDocumentAndAppliedOnlyWhenTheStoreDeliversItAtItsRevision() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "b", "value": 0], from: watcher)
        replicator.deliverAll(into: fixture.engine, from: 3)
        expectJSON(fixture.take(from: watcher).reply, ["ok": true, "seq": 3])
        let output = fixture.send(["op": "set", "id": 7, "object": "o", "keyPath": "a", "value": 1], from: writer)
        #expect(output.isEmpty && writer.isAwaiting, "no reply before the change is applied")
        #expect(fixture.value("o", "a") == nil, "nothing applied by the proposal")
        let proposal = try #require(replicator.pending.first?.proposal)
        #expect(proposal.change == ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting))
        #expect(proposal.document.map(JSONValue.object) == ["b": 0, "a": 1])
        replicator.deliverAll(into: fixture.engine, from: 17)
        expectJSON(fixture.take(from: writer).reply, ["id": 7, "ok": true, "seq": 17])
        #expect(!writer.isAwaiting)
        let events = fixture.take(from: watcher).events
        #expect(events.map { $0.member("seq") } == [17] && events.first?.member("new") == 1)
    }

    @Test func aLostRaceIsComputedAgainOnTheReplicaThatHasTheNewerChange() throws {
        _ = fixture.send(["op": "insert", "object": "o", "keyPath": "a", "value": "mine"], from: writer)
        // Another kvod's change to the object wins; the replica applies it, then the proposal is told.
        fixture.engine.applyReplicated(ReplicatedChange(op: "insert", object: "o", path: ["a"], kind: .insertion,
                                                        indexes: [0]), document: ["a": ["theirs"]], seq: 5)
        replicator.answer(.conflict)
        let again = try #require(replicator.pending.first?.proposal)
        #expect(again.change.indexes == [1] && again.document.map(JSONValue.object) == ["a": ["theirs", "mine"]])
        replicator.deliverAll(into: fixture.engine, from: 6)
        expectJSON(fixture.take(from: writer).reply, ["ok": true, "seq": 6])
        let events = fixture.take(from: watcher).events
        #expect(events.map { $0.member("indexes") } == [[0], [1]])
    }

    @Test func changesFailUnavailableAndReadsSayStaleWhileTheStoreIsOutOfReach() {
        replicator.isStale = true
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        replicator.answer(.unavailable("etcd at http://h:2379 unreachable; nothing changed"))
        let refused = fixture.take(from: writer).reply
        #expect(refused.member("error")?.member("code") == "unavailable")
        // Not there, as far as this replica knows: the error says so too.
        #expect(fixture.send(["op": "get", "object": "o"], from: writer).reply.member("error")?.member("stale") == true)
        fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "o", path: [], kind: .setting),
                                       document: ["a": 0], seq: 2)
        #expect(fixture.send(["op": "get", "object": "o"], from: writer).reply.member("stale") == true)
        #expect(fixture.send(["op": "list"], from: writer).reply.member("stale") == true)
        replicator.isStale = false
        #expect(fixture.send(["op": "list"], from: writer).reply.member("stale") == nil)
    }

    @Test func aHistoryOfRevisionsWithGapsReplaysExactlyTheChangesAfterAnySince() {
        for (seq, value) in [(5, 1), (9, 2), (20, 3)] {
            fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting),
                                           document: ["a": .number(JSONNumber(validatedLiteral: String(value)))],
                                           seq: UInt64(seq))
        }
        let reader = fixture.makeClient()
        for (since, seqs) in [(9, [20]), (6, [9, 20]), (4, [5, 9, 20]), (20, [])] as [(Int, [JSONValue])] {
            let output = fixture.send(["op": "observe", "object": "o", "keyPath": "a", "since": .number(
                JSONNumber(validatedLiteral: String(since)))], from: reader)
            #expect(output.events.map { $0.member("seq") } == seqs, "since \(since)")
            fixture.ok(["op": "unobserve", "object": "o"], from: reader)
        }
    }
}

/// A replicator whose answers the test gives: it keeps each proposal until
/// told what became of it; `deliverAll` commits them at consecutive revisions.
final class ScriptedReplicator: ChangeReplicator {
    var isStale = false
    var info: JSONObject = ["endpoint": "http://h:2379"]
    var pending: [(proposal: ChangeProposal, done: (ProposalOutcome) -> Void)] = []

    var pendingBatches: [(batch: BatchProposal, done: (ProposalOutcome) -> Void)] = []
    var maxObjectsPerProposal = Engine.maxPipelinedChanges

    func propose(_ proposal: ChangeProposal, _ outcome: @escaping (ProposalOutcome) -> Void) {
        pending.append((proposal, outcome))
    }

    func propose(_ batch: BatchProposal, _ outcome: @escaping (ProposalOutcome) -> Void) {
        pendingBatches.append((batch, outcome))
    }

    /// Tells the oldest proposal `outcome`.
    func answer(_ outcome: ProposalOutcome) {
        pending.removeFirst().done(outcome)
    }

    /// Applies every pending proposal, from revision `first` on, and tells
    /// each it was; after each, the loop turn ends (what it queued is proposed).
    func deliverAll(into engine: Engine, from first: UInt64) {
        var revision = first
        while !pending.isEmpty {
            let (proposal, done) = pending.removeFirst()
            engine.applyReplicated(proposal.change, document: proposal.document, seq: revision)
            done(.applied(seq: revision))
            engine.proposeQueuedPipelines()
            revision += 1
        }
    }

    /// Applies the oldest pending batch at `revision` as the store delivers it
    /// (each object's record as stored, read back), and tells it it was;
    /// then the loop turn ends.
    func deliverBatch(into engine: Engine, at revision: UInt64) {
        let (batch, done) = pendingBatches.removeFirst()
        defer { engine.proposeQueuedPipelines() }
        var steps: [ReplicatedBatchStep] = []
        var documents: [String: JSONObject?] = [:]
        for change in batch.changes {
            guard case .object(var record) = ReplicatedBatchStep.record(change.steps) else { continue }
            batch.context.write(to: &record)
            steps += ReplicatedBatchStep.steps(object: change.object, record: .object(record)) ?? []
            documents[change.object] = change.document
        }
        engine.applyReplicatedBatch(steps, documents: documents, seq: revision)
        done(.applied(seq: revision))
    }
}
