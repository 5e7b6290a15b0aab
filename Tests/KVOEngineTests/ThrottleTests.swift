import KVOValues
import Testing
@testable import KVOEngine

/// Issue 15, point 2: `throttle`, on a clock the test moves.
@Suite final class ThrottleTests {
    let (fixture, client, writer) = EngineFixture.withTwoClients()
    var clock: ManualClock { fixture.clock }

    private func set(_ value: Int) {
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": .number(JSONNumber(value))], from: writer)
    }

    @Test func theFirstChangeGoesAtOnceAndTheRestAreFoldedIntoOneWhenTheIntervalEnds() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "options": ["new", "prior"], "throttle": 100],
                   from: client)
        set(1)
        let first = fixture.take(from: client).events
        #expect(first.map { $0.member("prior") != nil } == [true, false], "\(first)")
        for value in 2...5 { set(value) }
        #expect(fixture.take(from: client).isEmpty, "folded within the interval, prior events dropped")
        #expect(fixture.engine.nextThrottleDeadline == 1_100)
        clock.advance(by: 99)
        fixture.engine.releaseThrottledEvents(at: clock.now.load(ordering: .relaxed))
        #expect(fixture.take(from: client).isEmpty, "not before the interval ends")
        clock.advance(by: 1)
        fixture.engine.releaseThrottledEvents(at: clock.now.load(ordering: .relaxed))
        let folded = fixture.take(from: client).events
        #expect(folded.count == 1 && folded.first?.member("new") == 5 && folded.first?.member("coalesced") == 3,
                "\(folded)")
        // Sending it opened the next interval: a change within it waits too.
        set(6)
        #expect(fixture.take(from: client).isEmpty)
        clock.advance(by: 100)
        fixture.engine.releaseThrottledEvents(at: clock.now.load(ordering: .relaxed))
        let next = fixture.take(from: client).events
        #expect(next.count == 1 && next.first?.member("new") == 6 && next.first?.member("coalesced") == nil, "\(next)")
        // An interval that ends with nothing folded closes: the next change goes at once.
        clock.advance(by: 100)
        fixture.engine.releaseThrottledEvents(at: clock.now.load(ordering: .relaxed))
        #expect(fixture.engine.nextThrottleDeadline == nil)
        set(7)
        #expect(fixture.take(from: client).events.contains { $0.member("new") == 7 })
    }

    @Test func unobservingDropsTheFoldedEvent() {
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "throttle": 50], from: client)
        set(1)
        set(2)
        fixture.ok(["op": "unobserve", "object": "o", "keyPath": "a"], from: client)
        _ = fixture.take(from: client)
        clock.advance(by: 50)
        fixture.engine.releaseThrottledEvents(at: clock.now.load(ordering: .relaxed))
        #expect(fixture.take(from: client).isEmpty)
        #expect(client.throttles.isEmpty)
    }

    @Test func observingAndUnobservingWithALongThrottleLeavesNoPileOfDeadlines() {
        for _ in 0..<1_000 {
            fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "throttle": 3_600_000], from: client)
            set(1)
            set(2)
            fixture.ok(["op": "unobserve", "object": "o", "keyPath": "a"], from: client)
        }
        _ = fixture.take(from: client)
        #expect(fixture.shared.throttleSchedule.openIntervals == 0)
        #expect(fixture.shared.throttleSchedule.entries.count <= 64 + 1, "\(fixture.shared.throttleSchedule.entries.count)")
    }

    /// Issue 33 row 5: an interval per object, kept for an hour even once the
    /// object was deleted, so a churn of short-lived names held one each.
    @Test func aPrefixObserverKeepsNoIntervalForAnObjectThatWasDeleted() {
        fixture.ok(["op": "observe", "prefix": "tmp/", "options": ["new"], "throttle": 3_600_000], from: client)
        for index in 0..<1_000 {
            let object = JSONValue.string("tmp/\(index)")
            fixture.ok(["op": "set", "object": object, "keyPath": "k", "value": 1], from: writer)
            fixture.ok(["op": "set", "object": object, "keyPath": "k", "value": 2], from: writer)
            fixture.ok(["op": "delete", "object": object], from: writer)
        }
        #expect(client.throttles.isEmpty, "\(client.throttles.values.first?.count ?? 0) objects' intervals kept")
        #expect(fixture.shared.throttleSchedule.bytes <= 65 * 32, "what the account holds for them")
        #expect(fixture.shared.throttleSchedule.openIntervals == 0)
        #expect(fixture.shared.throttleSchedule.entries.count <= 64 + 1, "\(fixture.shared.throttleSchedule.entries.count)")
        // Each object's creation went at once and its deletion too, standing for the set between.
        let events = fixture.take(from: client).events
        #expect(events.count == 2_000, "\(events.count)")
        #expect(events.last?.member("object") == "tmp/999" && events.last?.member("new") == .null)
        #expect(events.last?.member("coalesced") == 1)
        // A live object keeps its interval: a second change waits for its end.
        fixture.ok(["op": "set", "object": "tmp/live", "keyPath": "k", "value": 1], from: writer)
        fixture.ok(["op": "set", "object": "tmp/live", "keyPath": "k", "value": 2], from: writer)
        #expect(fixture.take(from: client).events.count == 1)
        #expect(client.throttles.values.first?.count == 1)
        // An open interval is in the memory account.
        let info = fixture.ok(["op": "info"], from: client).reply
        #expect((info.member("memory")?.member("throttles")?.intValue ?? 0) >= 128)
    }

    @Test func anUnthrottledObserverOfTheSamePathHearsEveryChange() {
        let other = fixture.makeClient()
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "throttle": 1000], from: client)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "a"], from: other)
        for value in 1...10 { set(value) }
        #expect(fixture.take(from: other).events.count == 10)
        #expect(fixture.take(from: client).events.count == 1)
    }
}
