import KVOValues
import Testing
@testable import KVOEngine

/// Group commit across connections over a replicated store (docs/CLUSTER.md,
/// "Pipelined changes"): the pipelines of every client read in one loop turn
/// are one proposal while the store's transaction takes them, each client's
/// requests in its order and each answered on its own.
extension ReplicationTests {
    private func set(_ object: String, _ keyPath: String, _ value: JSONValue, id: String,
                     from client: ClientController, _ extra: JSONObject = [:]) {
        var request: JSONObject = ["op": "set", "id": .string(id), "object": .string(object),
                                   "keyPath": .string(keyPath), "value": value]
        request.merge(extra) { $1 }
        #expect(fixture.send(.object(request), from: client).isEmpty, "no reply before the turn's end")
    }

    private func ids(_ output: WireOutput) -> [JSONValue?] { output.replies.map { $0.member("id") } }

    @Test func theClientsReadInOneTurnAreOneProposalAndEachGetsItsRepliesInItsOwnOrder() throws {
        fixture.engine.pipelinesChanges = true
        let (a, b, c) = (fixture.makeClient(), fixture.makeClient(), fixture.makeClient())
        set("o", "a", 1, id: "a0", from: a)
        set("o", "a", 2, id: "a1", from: a)
        set("p", "x", 3, id: "b0", from: b)
        set("q", "y", 4, id: "c0", from: c)
        _ = fixture.queuePipelinedChanges(a, b, c)
        #expect(replicator.pendingBatches.isEmpty && replicator.pending.isEmpty, "nothing before the turn's end")
        #expect(a.isAwaiting && b.isAwaiting && c.isAwaiting, "none read from meanwhile")
        fixture.engine.proposeQueuedPipelines()
        #expect(replicator.pending.isEmpty && replicator.pendingBatches.count == 1, "one proposal for the three")
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(batch.objects == ["o", "p", "q"])
        #expect(batch.changes.map { $0.steps.map(\.position) } == [[0, 1], [2], [3]])
        #expect(batch.changes.flatMap(\.steps).allSatisfy { $0.change.context.uid == nil })
        replicator.deliverBatch(into: fixture.engine, at: 12)
        let (toA, toB, toC) = (fixture.take(from: a), fixture.take(from: b), fixture.take(from: c))
        #expect(ids(toA) == ["a0", "a1"] && ids(toB) == ["b0"] && ids(toC) == ["c0"])
        #expect((toA.replies + toB.replies + toC.replies).allSatisfy { $0.member("seq") == 12 })
        #expect(!a.isAwaiting && !b.isAwaiting && !c.isAwaiting)
        #expect(fixture.value("p", "x") == 3 && fixture.value("q", "y") == 4)
        let told = fixture.take(from: watcher).events
        #expect(told.map { $0.member("new") } == [1, 2] && told.allSatisfy { $0.member("seq") == 12 })
    }

    @Test func twoClientsChangingOneObjectInOneTurnShareTheTransactionInTheOrderTheyWereRead() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": []], from: writer)
        replicator.deliverAll(into: fixture.engine, from: 2)
        _ = (fixture.take(from: writer), fixture.take(from: watcher))
        fixture.engine.pipelinesChanges = true
        let other = fixture.makeClient()
        for (client, values) in [(writer, ["w0", "w1"]), (other, ["o0"]), (writer, ["w2"])] {
            for value in values {
                _ = fixture.send(["op": "insert", "id": .string(value), "object": "o", "keyPath": "a",
                                  "value": .string(value)], from: client)
            }
            // `writer`'s third insert is read after its pipeline is queued: it waits behind it.
            _ = fixture.engine.queuePipelinedChanges(of: client)
        }
        fixture.engine.proposeQueuedPipelines()
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(replicator.pendingBatches.count == 1 && batch.changes.count == 1, "one object, one record")
        #expect(batch.changes[0].steps.map(\.position) == [0, 1, 2])
        #expect(batch.changes[0].document.map(JSONValue.object) == ["a": ["w0", "w1", "o0"]])
        replicator.deliverBatch(into: fixture.engine, at: 5)
        #expect(ids(fixture.take(from: other)) == ["o0"])
        // The one read behind went in the next turn.
        replicator.deliverAll(into: fixture.engine, from: 6)
        let replies = fixture.take(from: writer).replies
        #expect(replies.map { $0.member("id") } == ["w0", "w1", "w2"], "\(replies)")
        #expect(replies.map { $0.member("seq") } == [5, 5, 6])
        #expect(fixture.value("o", "a") == ["w0", "w1", "o0", "w2"])
        let told = fixture.take(from: watcher).events
        #expect(told.map { $0.member("new") } == [["w0"], ["w1"], ["o0"], ["w2"]], "\(told)")
        #expect(told.map { $0.member("indexes") } == [[0], [1], [2], [3]])
    }

    @Test func anOpThatFailsIsAnsweredAloneAndTheOtherClientsChangesGoOnWithoutIt() throws {
        fixture.engine.pipelinesChanges = true
        let (a, b, c) = (fixture.makeClient(), fixture.makeClient(), fixture.makeClient())
        set("o", "a", 1, id: "a0", from: a)
        set("o", "a", 2, id: "a1", from: a, ["ifValue": 7])
        set("o", "a", 3, id: "a2", from: a)
        set("q", "z", 9, id: "c0", from: c, ["ifModSeq": 4])
        set("q", "y", 1, id: "c1", from: c)
        set("p", "x", 1, id: "b0", from: b)
        set("p", "x", 2, id: "b1", from: b)
        _ = fixture.queuePipelinedChanges(a, c, b)
        fixture.engine.proposeQueuedPipelines()
        // c's first op fails at once, alone, and its second goes on its own, in the same turn.
        let toC = fixture.take(from: c)
        #expect(ids(toC) == ["c0"] && toC.reply.member("error")?.member("code") == "precondition_failed", "\(toC)")
        #expect(toC.reply.member("error")?.member("index") == nil, "its own error, not a batch's")
        #expect(replicator.pending.map(\.proposal.change.object) == ["q"])
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(replicator.pendingBatches.count == 1 && batch.objects == ["o", "p"], "a's first op and b's two")
        #expect(batch.changes.map { $0.steps.map(\.position) } == [[0], [1, 2]])
        replicator.deliverBatch(into: fixture.engine, at: 7)
        let toB = fixture.take(from: b)
        #expect(ids(toB) == ["b0", "b1"] && toB.replies.allSatisfy { $0.member("seq") == 7 }, "\(toB)")
        // a's failing op is answered after the one before it, then the one after it goes.
        replicator.deliverAll(into: fixture.engine, from: 8)
        let toA = fixture.take(from: a).replies
        #expect(toA.map { $0.member("id") } == ["a0", "a1", "a2"], "\(toA)")
        #expect(toA.map { $0.member("seq") } == [7, nil, 9])
        #expect(toA[1].member("error")?.member("code") == "precondition_failed")
        #expect(fixture.take(from: c).reply.member("seq") == 8)
        #expect(fixture.value("o", "a") == 3 && fixture.value("p", "x") == 2 && fixture.value("q") == ["y": 1])
    }

    @Test func aLostRaceComputesTheGroupAgainAndEachClientGetsItsOwnReplies() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": []], from: writer)
        replicator.deliverAll(into: fixture.engine, from: 2)
        _ = (fixture.take(from: writer), fixture.take(from: watcher))
        fixture.engine.pipelinesChanges = true
        let other = fixture.makeClient()
        _ = fixture.send(["op": "insert", "id": "w", "object": "o", "keyPath": "a", "value": "mine"], from: writer)
        _ = fixture.send(["op": "set", "id": "x0", "object": "p", "keyPath": "x", "value": 1], from: other)
        _ = fixture.send(["op": "insert", "id": "x1", "object": "o", "keyPath": "a", "value": "its"], from: other)
        _ = fixture.queuePipelinedChanges(writer, other)
        fixture.engine.proposeQueuedPipelines()
        #expect(replicator.pendingBatches.count == 1)
        // Another kvod's change to o wins; the replica applies it, then the group is told.
        fixture.engine.applyReplicated(ReplicatedChange(op: "insert", object: "o", path: ["a"], kind: .insertion,
                                                        indexes: [0]), document: ["a": ["theirs"]], seq: 5)
        replicator.pendingBatches.removeFirst().done(.conflict)
        let again = try #require(replicator.pendingBatches.first?.batch)
        #expect(replicator.pendingBatches.count == 1 && again.objects == ["o", "p"], "computed again, still one")
        #expect(again.changes.first?.document.map(JSONValue.object) == ["a": ["theirs", "mine", "its"]])
        #expect(fixture.take(from: writer).lines.isEmpty && writer.isAwaiting && other.isAwaiting)
        replicator.deliverBatch(into: fixture.engine, at: 6)
        let (toWriter, toOther) = (fixture.take(from: writer), fixture.take(from: other))
        #expect(ids(toWriter) == ["w"] && ids(toOther) == ["x0", "x1"], "\(toWriter) \(toOther)")
        #expect((toWriter.replies + toOther.replies).allSatisfy { $0.member("seq") == 6 })
        #expect(fixture.value("o", "a") == ["theirs", "mine", "its"] && fixture.value("p", "x") == 1)
    }

    @Test func aGroupWhoseOutcomeIsUnknownTellsEveryClientSoAndProposesNothingAgain() throws {
        fixture.engine.pipelinesChanges = true
        let (a, b) = (fixture.makeClient(), fixture.makeClient())
        set("o", "a", 1, id: "a0", from: a)
        set("o", "b", 1, id: "a1", from: a)
        set("p", "x", 1, id: "b0", from: b)
        _ = fixture.send(["op": "get", "id": "b1", "object": "p"], from: b)
        _ = fixture.queuePipelinedChanges(a, b)
        fixture.engine.proposeQueuedPipelines()
        #expect(replicator.pendingBatches.count == 1)
        replicator.pendingBatches.removeFirst().done(.unknown("etcd did not tell; it may have been applied"))
        fixture.engine.proposeQueuedPipelines()
        let (toA, toB) = (fixture.take(from: a).replies, fixture.take(from: b).replies)
        #expect(toA.map { $0.member("id") } == ["a0", "a1"] && toB.map { $0.member("id") } == ["b0", "b1"])
        #expect((toA + toB.prefix(1)).allSatisfy {
            $0.member("error")?.member("code") == "unavailable"
                && $0.member("error")?.member("message") == "etcd did not tell; it may have been applied"
        }, "\(toA) \(toB)")
        #expect(toB.last?.member("error")?.member("code") == "not_found", "the get after it answered in its place")
        #expect(replicator.pending.isEmpty && replicator.pendingBatches.isEmpty, "none proposed again")
        #expect(!a.isAwaiting && !b.isAwaiting)
    }

    @Test func theGroupsStayWithinTheObjectsOneTransactionOfTheStoreTakes() throws {
        fixture.engine.pipelinesChanges = true
        replicator.maxObjectsPerProposal = 2
        let (a, b, c) = (fixture.makeClient(), fixture.makeClient(), fixture.makeClient())
        set("o1", "k", 1, id: "a0", from: a)
        set("o2", "k", 1, id: "a1", from: a)
        #expect(a.isAwaiting, "two objects fill a transaction: queued at once")
        set("o3", "k", 1, id: "a2", from: a)
        set("o3", "k", 2, id: "b0", from: b)
        set("o1", "k", 2, id: "c0", from: c)
        _ = fixture.queuePipelinedChanges(a, b, c)
        fixture.engine.proposeQueuedPipelines()
        #expect(replicator.pendingBatches.map(\.batch.objects) == [["o1", "o2"], ["o3", "o1"]])
        replicator.deliverBatch(into: fixture.engine, at: 3)
        replicator.deliverBatch(into: fixture.engine, at: 4)
        // a's third, read after its pipeline was full, went next.
        replicator.deliverAll(into: fixture.engine, from: 5)
        let toA = fixture.take(from: a).replies
        #expect(toA.map { $0.member("id") } == ["a0", "a1", "a2"] && toA.map { $0.member("seq") } == [3, 3, 5])
        #expect(fixture.take(from: b).reply.member("seq") == 4 && fixture.take(from: c).reply.member("seq") == 4)
        #expect(fixture.value("o3", "k") == 1 && fixture.value("o1", "k") == 2)
    }

    @Test func aGroupTheStoresLimitsRefuseGoesAsEachClientsOwnPipeline() throws {
        fixture.engine.pipelinesChanges = true
        let (a, b) = (fixture.makeClient(), fixture.makeClient())
        a.credentials = PeerCredentials(pid: 1, uid: 1000, gid: 1000)
        b.credentials = PeerCredentials(pid: 2, uid: 1001, gid: 1001)
        set("o", "a", 1, id: "a0", from: a)
        set("o", "b", 2, id: "a1", from: a)
        set("p", "x", 3, id: "b0", from: b)
        set("q", "y", 4, id: "b1", from: b)
        _ = fixture.queuePipelinedChanges(a, b)
        fixture.engine.proposeQueuedPipelines()
        let grouped = try #require(replicator.pendingBatches.first?.batch)
        #expect(grouped.context.uid == nil, "two users: each step says whose it is")
        #expect(grouped.changes.map { $0.steps.map(\.change.context.uid) } == [[1000, 1000], [1001], [1001]])
        replicator.pendingBatches.removeFirst().done(.refused(KVOEngineError(.tooLarge, "over etcd's request bytes")))
        #expect(replicator.pendingBatches.map(\.batch.objects) == [["o"], ["p", "q"]], "each client's own")
        #expect(replicator.pendingBatches.map(\.batch.context.uid) == [1000, 1001])
        replicator.deliverBatch(into: fixture.engine, at: 3)
        replicator.deliverBatch(into: fixture.engine, at: 4)
        let (toA, toB) = (fixture.take(from: a).replies, fixture.take(from: b).replies)
        #expect(toA.map { $0.member("seq") } == [3, 3] && toB.map { $0.member("seq") } == [4, 4], "\(toA) \(toB)")
        #expect(fixture.value("o") == ["a": 1, "b": 2] && fixture.value("q", "y") == 4)
    }

    @Test func aClientThatLeavesWhileItsGroupIsInFlightLeavesTheOthersTheirReplies() throws {
        fixture.engine.pipelinesChanges = true
        let (a, b) = (fixture.makeClient(), fixture.makeClient())
        set("o", "a", 1, id: "a0", from: a)
        set("p", "x", 1, id: "b0", from: b)
        set("p", "y", 1, id: "b1", from: b)
        _ = fixture.queuePipelinedChanges(a, b)
        fixture.engine.proposeQueuedPipelines()
        fixture.engine.closeClient(a)
        fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "p", path: ["x"], kind: .setting),
                                       document: ["x": 0], seq: 5)
        replicator.pendingBatches.removeFirst().done(.conflict)
        let again = try #require(replicator.pendingBatches.first?.batch)
        #expect(again.objects == ["p"], "the one gone is not proposed again")
        replicator.deliverBatch(into: fixture.engine, at: 6)
        #expect(ids(fixture.take(from: b)) == ["b0", "b1"] && fixture.value("o") == nil)
    }
}

extension EngineFixture {
    /// What the daemon does once it has handled a read of each of `clients`.
    @discardableResult
    func queuePipelinedChanges(_ clients: ClientController...) -> [Bool] {
        clients.map { engine.queuePipelinedChanges(of: $0) }
    }
}
