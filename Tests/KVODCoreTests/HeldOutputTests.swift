import KVODCore
import Testing

/// Group commit's held output: bytes wait per batch, in order, and leave in one
/// piece once their batch and the ones before it committed.
@Suite struct HeldOutputTests {
    private func hold(_ text: String, _ batch: UInt64, now: UInt64, in held: inout HeldOutput) -> Bool {
        Array(text.utf8).withUnsafeBytes { held.hold($0, until: batch, now: now) }
    }

    @Test func outputLeavesInOrderOnceItsBatchCommitted() {
        var held = HeldOutput()
        #expect(held.isEmpty && held.oldestSince == nil)
        #expect(hold("a1\n", 1, now: 10, in: &held), "the first hold tells the daemon")
        #expect(!hold("a2\n", 1, now: 11, in: &held))
        #expect(!hold("b\n", 2, now: 12, in: &held))
        #expect(!hold("c\n", 3, now: 13, in: &held))
        #expect(held.byteCount == 10 && held.oldestSince == 10)
        let none = held.release(upTo: 0)
        #expect(none == nil, "nothing committed yet")
        let first = held.release(upTo: 2)
        #expect(first.map { String(decoding: $0, as: UTF8.self) } == "a1\na2\nb\n")
        #expect(held.byteCount == 2 && held.oldestSince == 13)
        let last = held.release(upTo: 9)
        #expect(last.map { String(decoding: $0, as: UTF8.self) } == "c\n")
        #expect(held.isEmpty && held.byteCount == 0)
    }

    @Test func aClosedConnectionDropsWhatItHeld() {
        var held = HeldOutput()
        _ = hold("x\n", 4, now: 1, in: &held)
        held.discard()
        let released = held.release(upTo: 4)
        #expect(held.isEmpty && held.byteCount == 0 && released == nil)
        #expect(hold("y\n", 5, now: 2, in: &held), "holding again after a discard tells the daemon again")
    }
}
