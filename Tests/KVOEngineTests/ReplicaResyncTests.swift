import Testing
@testable import KVOEngine

/// Over a replicated store (docs/CLUSTER.md): catching up over compacted
/// history tells observers so, a new epoch of the cluster forgets the history,
/// and `info` shows the replicator's state.
@Suite struct ReplicaResyncTests {
    let fixture = EngineFixture()
    let replicator = ScriptedReplicator()
    let watcher: ClientController

    init() {
        fixture.engine.replicator = replicator
        fixture.engine.loadReplica(documents: ["o": (["a": 1, "b": 1], 2), "gone": (["x": 1], 3)], revision: 3,
                                   epoch: "00000000000000aa")
        watcher = fixture.makeClient()
    }

    @Test func aResyncTellsEveryValueThatDiffersWithResyncTrueAndAPlainChangeDoesNot() {
        fixture.ok(["op": "observe", "object": "o", "keyPaths": ["a", "b"], "options": ["new", "old"]], from: watcher)
        fixture.ok(["op": "observe", "object": "gone", "keyPath": "x", "options": ["new"]], from: watcher)
        fixture.engine.resyncReplica(documents: ["o": ["a": 2, "b": 1]], revision: 40)
        let events = fixture.take(from: watcher).events
        #expect(events.count == 2, "a (changed) and gone.x (deleted); b kept its value: \(events)")
        #expect(events.allSatisfy { $0.member("resync") == true && $0.member("seq") == 40 })
        let a = events.first { $0.member("keyPath") == "a" }
        #expect(a?.member("old") == 1 && a?.member("new") == 2)
        fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting),
                                       document: ["a": 3, "b": 1], seq: 41)
        let next = fixture.take(from: watcher).events
        #expect(next.count == 1 && next.first?.member("resync") == nil, "\(next)")
        // A replay tells the resync as it was sent live.
        let reader = fixture.makeClient()
        let replay = fixture.send(["op": "observe", "object": "o", "keyPath": "a", "since": 39], from: reader).events
        #expect(replay.map { $0.member("resync") } == [true, nil])
    }

    @Test func aResyncTellsItsObjectsInNameOrderSoThatEveryKvodAgrees() {
        // Twenty objects a dictionary would give in its hash order (seeded per process): the even
        // ones deleted by the resync, the odd ones changed; each kvod must tell them in one order.
        let names = (0..<20).map { "r\($0 < 10 ? "0" : "")\($0)" }
        let replica = EngineFixture()
        replica.engine.replicator = ScriptedReplicator()
        replica.engine.loadReplica(documents: Dictionary(uniqueKeysWithValues: names.map { ($0, (["v": 1], 2)) }),
                                   revision: 3, epoch: "00000000000000aa")
        let observer = replica.makeClient()
        for name in names { replica.ok(["op": "observe", "object": .string(name), "keyPath": "v"], from: observer) }
        let kept = names.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        replica.engine.resyncReplica(documents: Dictionary(uniqueKeysWithValues: kept.map { ($0, ["v": 2]) }), revision: 40)
        let told = replica.take(from: observer).events.compactMap { $0.member("object")?.stringValue }
        let deleted = names.filter { !kept.contains($0) }
        #expect(told == deleted + kept, "deletions first, then the changed documents, each by name")
    }

    @Test func aNewEpochForgetsTheHistorySoAResumeFromTheOldOneIsCompacted() {
        fixture.engine.applyReplicated(ReplicatedChange(op: "set", object: "o", path: ["a"], kind: .setting),
                                       document: ["a": 2, "b": 1], seq: 5)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "since": 4, "epoch": "00000000000000aa"],
                   from: watcher)
        fixture.engine.adoptEpoch("00000000000000bb")
        let reader = fixture.makeClient()
        let refused = fixture.fails(["op": "observe", "object": "o", "keyPath": "a", "since": 4,
                                     "epoch": "00000000000000aa"], from: reader, code: "compacted")
        #expect(refused.reply.member("error")?.member("epoch") == "00000000000000bb")
        // Without an epoch, the forgotten changes are compacted too.
        fixture.fails(["op": "observe", "object": "o", "keyPath": "a", "since": 4], from: reader, code: "compacted")
        #expect(fixture.send(["op": "info"], from: reader).reply.member("epoch") == "00000000000000bb")
    }

    @Test func infoShowsTheReplicatorsStateUnderCluster() {
        let info = fixture.send(["op": "info"], from: watcher).reply
        #expect(info.member("cluster") == ["endpoint": "http://h:2379"])
        fixture.engine.replicator = nil
        #expect(fixture.send(["op": "info"], from: watcher).reply.member("cluster") == nil)
    }
}
