import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// `insert`, `remove` and `replace` with many scattered indexes, and the undo
/// that replays them to an ancestor's observer, against a naive reference
/// that applies one index at a time (what the one-pass code replaced).
@Suite final class ManyIndexesTests {
    let (fixture, client) = EngineFixture.withClient()

    /// `count` distinct positions in `0..<bound`, in a random order.
    private static func scattered(_ count: Int, below bound: Int, using random: inout SplitMix64) -> [Int] {
        Array(Array(0..<bound).shuffled(using: &random).prefix(count))
    }

    private static func numbers(_ values: some Sequence<Int>) -> [JSONValue] {
        values.map { .number(JSONNumber($0)) }
    }

    private func array() -> [JSONValue] {
        guard case .array(let elements)? = fixture.store.value("o", at: ["list"]) else { return [] }
        return elements
    }

    @Test func scatteredIndexesGiveWhatOneIndexAtATimeGives() {
        var random = SplitMix64(seed: 17)
        var reference = Self.numbers(0..<2_000)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "values": .array(reference)], from: client)
        for round in 0..<20 {
            // Remove: positions in the array before, given in any order.
            let removed = Self.scattered(Int.random(in: 1...300, using: &random), below: reference.count, using: &random)
            fixture.ok(["op": "remove", "object": "o", "keyPath": "list",
                        "indexes": .array(Self.numbers(removed))], from: client)
            for index in removed.sorted(by: >) { reference.remove(at: index) }
            let afterRemove = array() == reference
            #expect(afterRemove, "remove, round \(round)")

            // Replace: each value goes to the index it was given with.
            let replaced = Self.scattered(Int.random(in: 1...300, using: &random), below: reference.count, using: &random)
            let values = Self.numbers(replaced.map { 100_000 * (round + 1) + $0 })
            fixture.ok(["op": "replace", "object": "o", "keyPath": "list", "indexes": .array(Self.numbers(replaced)),
                        "values": .array(values)], from: client)
            for (index, value) in zip(replaced, values) { reference[index] = value }
            let afterReplace = array() == reference
            #expect(afterReplace, "replace, round \(round)")

            // Insert: a run of values at a random position, end included.
            let position = Int.random(in: 0...reference.count, using: &random)
            let inserted = Self.numbers((0..<Int.random(in: 1...300, using: &random)).map { -1_000 * round - $0 })
            fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "index": .number(JSONNumber(position)),
                        "values": .array(inserted)], from: client)
            for (offset, value) in inserted.enumerated() { reference.insert(value, at: position + offset) }
            let afterInsert = array() == reference
            #expect(afterInsert, "insert, round \(round)")
        }
    }

    @Test func undoingScatteredChangesGivesBackEachArrayBefore() {
        var random = SplitMix64(seed: 71)
        var states: [[JSONValue]] = []
        var current = Self.numbers(0..<1_000)
        fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "values": .array(current)], from: client)
        let firstSeq = fixture.seq
        for round in 0..<30 {
            states.append(current)
            switch round % 3 {
            case 0:
                let removed = Self.scattered(Int.random(in: 1...200, using: &random), below: current.count, using: &random)
                fixture.ok(["op": "remove", "object": "o", "keyPath": "list",
                            "indexes": .array(Self.numbers(removed))], from: client)
                for index in removed.sorted(by: >) { current.remove(at: index) }
            case 1:
                let replaced = Self.scattered(Int.random(in: 1...200, using: &random), below: current.count, using: &random)
                let values = Self.numbers(replaced.map { -$0 - 1 })
                fixture.ok(["op": "replace", "object": "o", "keyPath": "list",
                            "indexes": .array(Self.numbers(replaced)), "values": .array(values)], from: client)
                for (index, value) in zip(replaced, values) { current[index] = value }
            default:
                let position = Int.random(in: 0...current.count, using: &random)
                let inserted = Self.numbers((0..<Int.random(in: 1...200, using: &random)).map { 5_000 + $0 })
                fixture.ok(["op": "insert", "object": "o", "keyPath": "list", "index": .number(JSONNumber(position)),
                            "values": .array(inserted)], from: client)
                current.insert(contentsOf: inserted, at: position)
            }
        }
        let applied = array() == current
        #expect(applied)
        // Newest first, as a replay to an observer of the whole document undoes them.
        let changes = Array(fixture.engine.history.changes(after: firstSeq).filter { $0.object == "o" })
        #expect(changes.count == states.count)
        var document = fixture.store.value("o", at: [])
        for (change, before) in zip(changes, states).reversed() {
            document = change.valueBefore(at: [], after: document)
            // Compared apart: a failure names the change, not two arrays of a thousand elements.
            let restored = document?.value(at: ["list"]) == .array(before)
            #expect(restored, "undo of seq \(change.seq)")
        }
    }
}
