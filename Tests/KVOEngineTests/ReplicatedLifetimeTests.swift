import KVOValues
import Testing
@testable import KVOEngine

/// Ephemeral values and ttl over a replicated store (docs/CLUSTER.md), at the
/// engine: what a proposal carries, how records read, and when the end of a
/// value's lease becomes its deletion.
@Suite final class ReplicatedLifetimeTests {
    let (fixture, writer, watcher) = EngineFixture.withTwoClients()
    let replicator = ScriptedReplicator()

    init() {
        fixture.engine.replicator = replicator
        writer.credentials = PeerCredentials(pid: 1, uid: 1000, gid: 1000)
        _ = watcher.observe("o", keyPath: keyPath("a"), options: [.new], context: nil)
    }

    @Test func anEphemeralSetIsProposedWithItsLifetimeOwnerAndUidAndEveryReplicaKnowsTheValueIsLeased() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 1, "ephemeral": true, "ttl": 5],
                         from: writer)
        let proposal = try #require(replicator.pending.first?.proposal)
        #expect(proposal.lifetimes == ProposedLifetimes(lifetime: ValueLifetime(ephemeral: true, ttl: 5),
                                                        owner: writer.id, endsLeases: false))
        #expect(proposal.change.context == ChangeContext(uid: 1000, lifetime: ValueLifetime(ephemeral: true, ttl: 5)))
        replicator.deliverAll(into: fixture.engine, from: 4)
        expectJSON(fixture.send(["op": "get", "object": "o", "keyPath": "a"], from: watcher).reply,
                   ["ok": true, "value": 1, "modSeq": 4, "seq": 4, "ephemeral": true, "expiresIn": 5])
        // A plain set there ends the lease: its proposal deletes the leased keys, and a lease's end deletes nothing.
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 2], from: writer)
        #expect(replicator.pending.first?.proposal.lifetimes.endsLeases == true)
        replicator.deliverAll(into: fixture.engine, from: 5)
        #expect(fixture.engine.releaseProposal(object: "o", path: ["a"], cause: .disconnect, grantedAt: 4) == nil)
    }

    @Test func aBatchsSetsCarryTheirLifetimesAndItsOwnerAndEveryReplicaKnowsTheirValuesAreLeased() throws {
        _ = fixture.send(["op": "batch", "ops": [
            ["op": "set", "object": "o", "keyPath": "a", "value": 1, "ephemeral": true],
            ["op": "set", "object": "o", "keyPath": "b", "value": 2, "ttl": 3],
            ["op": "set", "object": "p", "keyPath": "c", "value": 3],
        ]], from: writer)
        let batch = try #require(replicator.pendingBatches.first?.batch)
        #expect(batch.owner == writer.id && batch.context.uid == 1000)
        let lifetimes = batch.changes.flatMap { $0.steps.map(\.change.context.lifetime) }
        #expect(lifetimes == [ValueLifetime(ephemeral: true), ValueLifetime(ttl: 3), nil])
        replicator.deliverBatch(into: fixture.engine, at: 8)
        expectJSON(fixture.send(["op": "get", "object": "o", "keyPath": "a"], from: watcher).reply,
                   ["ok": true, "value": 1, "modSeq": 8, "seq": 8, "ephemeral": true])
        #expect(fixture.engine.holdsLeases(in: "o") && !fixture.engine.holdsLeases(in: "p"))
        let release = try #require(fixture.engine.releaseProposal(object: "o", path: ["b"], cause: .ttl, grantedAt: 8))
        #expect(release.document == ["a": 1])
    }

    @Test func theEndOfALeaseIsTheDeletionOfTheValueItStillHoldsWithItsCause() throws {
        var leased = ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting)
        leased.context = ChangeContext(uid: 1000, host: "web1", lifetime: ValueLifetime(ttl: 2))
        fixture.engine.applyReplicated(leased, document: ["a": 1], seq: 3)
        _ = fixture.take(from: watcher)
        #expect(fixture.engine.releaseProposal(object: "o", path: ["a"], cause: .ttl, grantedAt: 2) == nil,
                "a key of an older set")
        let release = try #require(fixture.engine.releaseProposal(object: "o", path: ["a"], cause: .ttl, grantedAt: 3))
        // Issue 34 item 5: the object held only the leased value, so it goes with it.
        #expect(release.document == nil && release.lifetimes.endsLeases, "the object deleted with its only value")
        #expect(release.change.context == ChangeContext(cause: .ttl))
        fixture.engine.applyReplicated(release.change, document: release.document, seq: 6)
        let events = fixture.take(from: watcher).events
        #expect(events.count == 1 && events.first?.member("cause") == "ttl" && events.first?.member("seq") == 6)
    }

    @Test func aTTLValueTellsExpiresInFromItsRecordsDeadlineButOnlyTheStoreDeletesIt() throws {
        var leased = ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting)
        leased.context = ChangeContext(lifetime: ValueLifetime(ttl: 2), expires: wallClockNow() + 99.5)
        #expect(ReplicatedChange(object: "o", json: leased.json)?.context == leased.context)
        fixture.engine.applyReplicated(leased, document: ["a": 1], seq: 3)
        #expect(fixture.send(["op": "get", "object": "o", "keyPath": "a"], from: watcher).reply.member("expiresIn") == 100)
        // An older kvod's record tells no deadline: the ttl from now.
        leased.path = ["b"]
        leased.context.expires = nil
        fixture.engine.applyReplicated(leased, document: ["a": 1, "b": 2], seq: 4)
        #expect(fixture.send(["op": "get", "object": "o", "keyPath": "b"], from: watcher).reply.member("expiresIn") == 2)
        // A kvod that loads the note gets the deadline it tells; one long past deletes nothing here.
        fixture.engine.restoreReplicatedLease(object: "o", path: ["a"], ephemeral: false, at: 3,
                                              expires: wallClockNow() - 10)
        #expect(fixture.send(["op": "get", "object": "o", "keyPath": "a"], from: watcher).reply.member("expiresIn") == 0)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("o", "a") == 1 && replicator.pending.isEmpty, "the store's lease ends it, not the engine")
    }

    @Test func recordsReadWhatTheyKnowAndIgnoreTheRest() throws {
        var change = ReplicatedChange(op: "delete", object: "o", path: ["a"], kind: .setting)
        change.context = ChangeContext(cause: .disconnect, uid: 7, host: "h", lifetime: ValueLifetime(ephemeral: true, ttl: 1.5))
        #expect(ReplicatedChange(object: "o", json: change.json) == change)
        // An older kvod's record, and a newer one's with members of kinds this one does not know.
        let older = try JSONReader.parse(Array(#"{"op":"set","path":["a"],"kind":"setting","indexes":[]}"#.utf8))
        #expect(ReplicatedChange(object: "o", json: older)?.context == ChangeContext())
        let newer = try JSONReader.parse(Array(
            #"{"op":"set","path":["a"],"kind":"setting","cause":"eviction","uid":"x","host":"h","ttl":-1,"by":{}}"#.utf8))
        #expect(ReplicatedChange(object: "o", json: newer)?.context == ChangeContext(host: "h"))
    }

    @Test func aRecordLeavesOutEmptyIndexesAndIsReadAsWithThem() throws {
        let set = ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting)
        #expect(set.json.jsonString == #"{"op":"set","path":["a"],"kind":"setting"}"#)
        #expect(ReplicatedChange(object: "o", json: set.json) == set)
        let insert = ReplicatedChange(op: "insert", object: "o", path: ["l"], kind: .insertion, indexes: [0, 2])
        #expect(insert.json.jsonString == #"{"op":"insert","path":["l"],"kind":"insertion","indexes":[0,2]}"#)
        #expect(ReplicatedChange(object: "o", json: insert.json) == insert)
        // What the kvods before wrote, with the empty array, reads as the same change.
        let before = try JSONReader.parse(Array(#"{"op":"set","path":["a"],"kind":"setting","indexes":[]}"#.utf8))
        #expect(ReplicatedChange(object: "o", json: before) == set)
    }
}
