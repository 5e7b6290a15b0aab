@testable import KVOClient
import KVOEngine
import Testing

/// The fold of a slow subscriber's waiting changes (``PendingChanges``), as kvod folds a slow reader's events.
@Suite struct PendingChangesTests {
    private func change(_ keyPath: String, _ value: Int, prior: Bool = false, initial: Bool = false,
                        coalesced: Int? = nil) -> Delivered {
        let new: JSONValue? = prior ? nil : .number(JSONNumber(value))
        return Delivered(change: Change(object: "o", keyPath: keyPath, kind: .setting, new: new, isPrior: prior,
                                        isInitial: initial, seq: UInt64(value), coalesced: coalesced),
                         ticket: nil, bytes: 100)
    }

    @Test func pastTheLimitTheLatestPerKeyPathStaysInItsPlaceAndCountsTheRest() {
        var pending = PendingChanges(limit: 450)
        _ = pending.append([change("a", 0, initial: true), change("a", 1), change("b", 2)])
        #expect(pending.changes.count == 3, "under the limit nothing is folded")
        _ = pending.append([change("a", 3, prior: true), change("a", 3), change("a", 4, coalesced: 5)])
        let kept = pending.takeAll().map { "\($0.change.keyPath!)\($0.change.seq)/\($0.change.coalesced ?? 0)" }
        // The initial change stays; a1 and a3 fold into a4 (which stood for 5 already); the prior goes.
        #expect(kept == ["a0/0", "b2/0", "a4/7"])
        #expect(pending.isEmpty && pending.bytes == 0)
    }
}
