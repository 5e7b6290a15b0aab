import KVOValues
import Testing
@testable import KVOEngine

/// modSeqs over a replicated store (docs/CLUSTER.md, "modSeqs over etcd"): a
/// replica that loads the store, or resyncs to it, gives each key path the
/// modSeq of a replica that followed the changes, from the tree each record
/// stores; the stored form stays within its bound without ever going back.
@Suite struct ReplicatedModSeqsTests {
    let fixture = EngineFixture()
    let replicator = ScriptedReplicator()
    let writer: ClientController

    init() {
        fixture.engine.replicator = replicator
        fixture.engine.loadReplica(documents: [:], revision: 1, epoch: "00000000000000aa")
        writer = fixture.makeClient()
    }

    /// Commits the pending proposal at `revision` as etcd and a following kvod
    /// do: its record stores the tree; the replica applies the change and takes it.
    private func commit(at revision: UInt64) throws -> JSONValue {
        let (proposal, done) = replicator.pending.removeFirst()
        let stored = try #require(proposal.modSeqs?.json(maxBytes: ReplicatedModSeqs.maxBytes))
        let record = ReplicatedModSeqs.record(proposal.change.json, with: stored)
        fixture.engine.applyReplicated(proposal.change, document: proposal.document, seq: revision)
        fixture.engine.adoptReplicatedModSeqs(proposal.change.object,
                                              ReplicatedModSeqs.tree(inRecord: record, revision: revision),
                                              revision: revision)
        done(.applied(seq: revision))
        return record
    }

    @Test func aReplicaLoadedWithTheStoredTreeGivesEachKeyPathTheFollowersModSeq() throws {
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: writer)
        _ = try commit(at: 5)
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "b", "value": ["c": 2]], from: writer)
        let record = try commit(at: 9)
        #expect(record.value(at: ["modSeqs"]).flatMap(ModSeqTree.init(json:)) == ModSeqTree(json: [
            "r": 5, "m": 0, "c": ["a": 5, "b": 0]]),
                "the change's own seqs, its revision unknown when proposed, are 0: \(record)")
        let followed = fixture.store
        #expect(followed.modSeq("o", at: ["a"]) == 5 && followed.modSeq("o", at: ["b", "c"]) == 9)

        let document = try #require(followed.document("o"))
        let loaded = EngineFixture()
        loaded.engine.loadReplica(documents: ["o": (document, 9)], revision: 9, epoch: "00000000000000aa",
                                  modSeqs: ["o": try #require(ReplicatedModSeqs.tree(inRecord: record, revision: 9))])
        for keys in [[], ["a"], ["b"], ["b", "c"]] {
            #expect(loaded.store.modSeq("o", at: keys) == followed.modSeq("o", at: keys), "\(keys)")
        }
        // A record without a tree (an older kvod's, etcdctl's): the whole document at its revision.
        let coarse = EngineFixture()
        coarse.engine.loadReplica(documents: ["o": (document, 9)], revision: 9, epoch: "00000000000000aa")
        #expect(coarse.store.modSeq("o", at: ["a"]) == 9)
    }

    @Test func aResyncTakesTheStoredTreesEvenOfDocumentsThatDidNotChange() throws {
        let other = EngineFixture()
        other.engine.loadReplica(documents: ["o": (["a": 1, "b": 2], 9)], revision: 9, epoch: "00000000000000aa")
        let tree = ModSeqTree(replacedAt: 3, modifiedAt: 9, children: ["b": ModSeqTree(replacedAt: 9, modifiedAt: 9)])
        other.engine.resyncReplica(documents: ["o": ["a": 1, "b": 2]], revision: 40, modSeqs: ["o": tree])
        #expect(other.store.modSeq("o", at: ["a"]) == 3 && other.store.modSeq("o", at: ["b"]) == 9)
    }

    @Test func aTreeOverItsBoundKeepsFewerLevelsAndNoModSeqGoesBack() throws {
        var children: [String: ModSeqTree] = [:]
        for index in 0..<50 {
            children["k\(index)"] = ModSeqTree(replacedAt: 2, modifiedAt: UInt64(10 + index),
                                               children: ["deep": ModSeqTree(replacedAt: UInt64(10 + index),
                                                                             modifiedAt: UInt64(10 + index))])
        }
        let tree = ModSeqTree(replacedAt: 2, modifiedAt: 70, children: children)
        let proposed = ProposedModSeqs(tree: tree, base: 69)
        let full = try #require(proposed.json(maxBytes: .max))
        let bound = full.jsonBytes.count - 1
        let pruned = try #require(proposed.json(maxBytes: bound))
        #expect(pruned.jsonBytes.count <= bound)
        let read = try #require(ReplicatedModSeqs.tree(inRecord: ["modSeqs": pruned], revision: 70))
        #expect(read.modSeq(at: []) == 70 && read.modSeq(at: ["k0"]) == 10, "one level kept: \(pruned)")
        #expect(read.modSeq(at: ["k0", "deep"]) == 10 && read.modSeq(at: ["k0", "other"]) == 10,
                "below it, the level's modSeq, never older than the true one (2 for k0.other)")
        #expect(proposed.json(maxBytes: 0) == nil, "not even the root fits")
        #expect(ReplicatedModSeqs.tree(inRecord: ["modSeqs": 71], revision: 70) == nil, "a seq after its record's")
    }
}
