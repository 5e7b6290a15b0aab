import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// The set of a top-level member that `ObjectTable` writes into its modSeq
/// tree late (docs/PERFORMANCE.md, "What a set costs the loop"): every read
/// sees the tree that recording each change in turn makes, whatever follows
/// the deferred set (another member, another object, a nested change, a
/// deletion, the document replaced or deleted).
@Suite struct DeferredModSeqTests {
    /// The objects' trees as `ModSeqTree.record` makes them from each change
    /// in the history, as `Store.recordModSeq` did before it deferred anything.
    private func reference(_ engine: Engine) -> [String: ModSeqTree] {
        var trees: [String: ModSeqTree] = [:]
        for change in engine.history.all {
            if change.path.isEmpty, change.new == nil {
                trees[change.object] = nil
                continue
            }
            if change.createdObject || change.path.isEmpty || trees[change.object] == nil {
                trees[change.object] = ModSeqTree(madeAt: change.seq)
            }
            trees[change.object]!.record(change)
        }
        return trees
    }

    @Test func everyReadSeesTheTreeThatRecordingEachChangeMakes() {
        var generator = SplitMix64(seed: 0x5E7C_0575)
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        let objects = ["a", "b"]
        let keyPaths = ["x", "y", "x.n", "y.m.k"]
        for step in 0..<2_000 {
            let object = objects[Int(generator.next() % 2)]
            let keyPath = keyPaths[Int(generator.next() % UInt64(keyPaths.count))]
            let request: JSONValue
            switch generator.next() % 10 {
            case 0: request = ["op": "delete", "object": .string(object), "keyPath": .string(keyPath)]
            case 1: request = ["op": "delete", "object": .string(object)]
            case 2: request = ["op": "set", "object": .string(object), "value": ["x": 1]]
            case 3: request = ["op": "set", "object": .string(object), "keyPath": .string(keyPath), "value": ["n": 2]]
            default:
                request = ["op": "set", "object": .string(object), "keyPath": .string(keyPath),
                           "value": .number(JSONNumber(validatedLiteral: String(step)))]
            }
            _ = fixture.send(request, from: client)
            // Read only sometimes, so that runs of sets stay deferred between reads.
            guard generator.next() % 4 == 0 else { continue }
            let expected = reference(fixture.engine)
            for name in objects {
                #expect(fixture.store.modSeqs(name) == expected[name], "step \(step), object \(name)")
            }
        }
    }

    @Test func aRunOfSetsOfOneMemberThenAnotherKeepsEachMembersSeq() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        for value in 1...3 { _ = fixture.send(["op": "set", "object": "o", "keyPath": "x", "value": .number(JSONNumber(validatedLiteral: String(value)))], from: client) }
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "y", "value": 1], from: client)
        _ = fixture.send(["op": "set", "object": "p", "keyPath": "x", "value": 1], from: client)
        #expect(fixture.store.modSeq("o", at: ["x"]) == 3)
        #expect(fixture.store.modSeq("o", at: ["y"]) == 4)
        #expect(fixture.store.modSeq("o", at: []) == 4)
        #expect(fixture.store.modSeq("p", at: ["x"]) == 5)
        #expect(fixture.store.modSeqs("o") == ModSeqTree(replacedAt: 1, modifiedAt: 4, children: [
            "x": ModSeqTree(replacedAt: 3, modifiedAt: 3), "y": ModSeqTree(replacedAt: 4, modifiedAt: 4)]))
    }
}
