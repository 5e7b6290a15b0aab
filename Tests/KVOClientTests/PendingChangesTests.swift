@testable import KVOClient
import KVOValues
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

    @Test func pastTheLimitTheLatestPerKeyPathStaysInItsPlaceAndCountsTheRest() throws {
        var pending = PendingChanges(limit: 450)
        _ = try pending.append([change("a", 0, initial: true), change("a", 1), change("b", 2)])
        #expect(pending.changes.count == 3, "under the limit nothing is folded")
        _ = try pending.append([change("a", 3, prior: true), change("a", 3), change("a", 4, coalesced: 5)])
        let kept = pending.takeAll().map { "\($0.change.keyPath!)\($0.change.seq)/\($0.change.coalesced ?? 0)" }
        // The initial change stays; a1 and a3 fold into a4 (which stood for 5 already); the prior goes.
        #expect(kept == ["a0/0", "b2/0", "a4/7"])
        #expect(pending.isEmpty && pending.bytes == 0)
    }
}

/// A subscriber that asked for every change (``DeliveryOptions/everyChange``) is never folded: it ends.
@Suite struct EveryChangePendingTests {
    private func change(_ value: Int, coalesced: Int? = nil) -> Delivered {
        Delivered(change: Change(object: "o", keyPath: "k", kind: .setting, new: .number(JSONNumber(value)),
                                 seq: UInt64(value), coalesced: coalesced),
                  ticket: nil, bytes: 100)
    }

    @Test func pastTheLimitNothingIsFoldedAndAppendingThrows() throws {
        var pending = PendingChanges(limit: 450, everyChange: true)
        _ = try pending.append([change(1), change(2), change(3)])
        let error = #expect(throws: KVOClientError.self) { try pending.append([change(4), change(5)]) }
        #expect(error?.code == .limitExceeded)
        #expect(pending.takeAll().map(\.change.seq) == [1, 2, 3, 4, 5], "every change held, none folded")
    }

    @Test func aChangeKvodCoalescedEndsItBeforeThatChange() throws {
        var pending = PendingChanges(limit: 1 << 20, everyChange: true)
        let error = #expect(throws: KVOClientError.self) {
            try pending.append([change(1), change(5, coalesced: 3), change(6)])
        }
        #expect(error?.code == .limitExceeded && error?.message.contains("coalesced 3 changes of o k") == true)
        #expect(pending.takeAll().map(\.change.seq) == [1])
    }
}
