import KVOValues
import Testing
@testable import KVOEngine

/// A wall clock the test moves.
final class TestClock: @unchecked Sendable {
    var now: Double = 1_000_000
}

/// Issue 14, points 4-6: ephemeral values, TTLs, and the events of kvod's own deletions.
@Suite struct LeaseTests {
    let clock = TestClock()
    let fixture: EngineFixture
    let owner: ClientController
    let observer: ClientController

    init() {
        var configuration = EngineConfiguration()
        let clock = self.clock
        configuration.wallClock = { clock.now }
        fixture = EngineFixture(configuration: configuration)
        owner = fixture.makeClient()
        observer = fixture.makeClient()
    }

    @Test func ephemeralValueIsDeletedWhenItsOwnerClosesWithCauseDisconnect() {
        fixture.ok(["op": "observe", "object": "svc/web", "keyPath": "addr", "options": ["new", "old"]], from: observer)
        fixture.ok(["op": "set", "object": "svc/web", "keyPath": "addr", "value": "a", "ephemeral": true], from: owner)
        let read = fixture.ok(["op": "get", "object": "svc/web", "keyPath": "addr"], from: observer).reply
        #expect(read.member("ephemeral") == true && read.member("expiresIn") == nil)
        _ = fixture.take(from: observer)
        fixture.engine.closeClient(owner)
        #expect(fixture.engine.hasPendingReleases)
        #expect(fixture.engine.releaseDueValues() == false)
        expectJSON(fixture.take(from: observer).lines, [
            ["event": "change", "object": "svc/web", "keyPath": "addr", "kind": "setting", "new": .null, "old": "a",
             "cause": "disconnect", "seq": 2],
        ])
        #expect(fixture.engine.leaseCount == 0)
    }

    @Test func aLaterSetOrDeleteAtThePathOrAboveEndsOwnershipAndAnEphemeralSetMovesIt() {
        let other = fixture.makeClient()
        fixture.ok(["op": "set", "object": "o", "keyPath": "a.b", "value": 1, "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": ["b": 2]], from: other)
        fixture.ok(["op": "set", "object": "o", "keyPath": "x", "value": 1, "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "x", "value": 2, "ephemeral": true], from: other)
        fixture.ok(["op": "set", "object": "o", "keyPath": "y", "value": ["q": 1], "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "y.z", "value": 1], from: other)   // under it: stays owned
        fixture.engine.closeClient(owner)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("o") == ["a": ["b": 2], "x": 2])
        fixture.engine.closeClient(other)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("o") == ["a": ["b": 2]])
    }

    @Test func changingOneLeasedMemberLeavesItsSiblingsLeasedAndReplacingTheirParentEndsThem() {
        let other = fixture.makeClient()
        for name in ["a", "b", "c"] {
            fixture.ok(["op": "set", "object": "o", "keyPath": .string("m.\(name)"), "value": 1, "ephemeral": true],
                       from: owner)
        }
        fixture.ok(["op": "set", "object": "o", "keyPath": "m.a", "value": 2], from: other)   // ends m.a only
        fixture.ok(["op": "delete", "object": "o", "keyPath": "m.b"], from: other)           // ends m.b only
        #expect(fixture.engine.leaseCount == 1)
        fixture.ok(["op": "set", "object": "p", "keyPath": "m.a", "value": 1, "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "p", "keyPath": "m", "value": 0], from: other)     // an object replaced
        #expect(fixture.engine.leaseCount == 1)
        fixture.engine.closeClient(owner)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("o") == ["m": ["a": 2]])
        #expect(fixture.value("p") == ["m": 0])
    }

    @Test func ttlDeletesTheValueAtItsDeadlineNotBeforeAndASetRenewsIt() {
        fixture.ok(["op": "observe", "object": "lease", "keyPath": "holder", "options": ["new"]], from: observer)
        fixture.ok(["op": "set", "object": "lease", "keyPath": "holder", "value": "a", "ttl": 3], from: owner)
        clock.now += 1.5
        #expect(fixture.ok(["op": "get", "object": "lease", "keyPath": "holder"], from: owner).reply
            .member("expiresIn") == 2)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("lease", "holder") == "a")
        fixture.ok(["op": "set", "object": "lease", "keyPath": "holder", "value": "a", "ttl": 3], from: owner)
        clock.now += 2.9
        fixture.engine.releaseDueValues()
        #expect(fixture.value("lease", "holder") == "a")
        clock.now += 0.2
        fixture.engine.releaseDueValues()
        #expect(fixture.value("lease", "holder") == nil)
        let events = fixture.take(from: observer).events
        #expect(events.last?.member("cause") == "ttl" && events.last?.member("new") == .null)
        #expect(events.count == 3)
    }

    @Test func aSetWithoutTtlOrADeleteEndsTheDeadline() {
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ttl": 1], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 2], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "j", "value": 1, "ttl": 1], from: owner)
        fixture.ok(["op": "delete", "object": "o", "keyPath": "j"], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "j", "value": 3], from: owner)
        clock.now += 5
        fixture.engine.releaseDueValues()
        #expect(fixture.value("o") == ["k": 2, "j": 3])
        #expect(fixture.engine.leaseCount == 0)
    }

    @Test func manyReleasesAreMadeInSlices() {
        for index in 0..<1_200 {
            fixture.ok(["op": "set", "object": "o", "keyPath": .string("k\(index)"), "value": 1, "ephemeral": true],
                       from: owner)
        }
        fixture.engine.closeClient(owner)
        #expect(fixture.engine.releaseDueValues(budget: 500) == true)
        #expect(fixture.engine.releaseDueValues(budget: 500) == true)
        #expect(fixture.engine.releaseDueValues(budget: 500) == false)
        // The last release left nothing else in the object: it went whole.
        #expect(fixture.value("o") == nil)
        #expect(fixture.seq == 2_400)
    }

    @Test func manyDeadlinesPassingAtOnceAreTakenInSlices() {
        for index in 0..<1_200 {
            fixture.ok(["op": "set", "object": "o", "keyPath": .string("k\(index)"), "value": 1, "ttl": 1], from: owner)
        }
        fixture.ok(["op": "set", "object": "o", "keyPath": "k0", "value": 1, "ttl": 100], from: owner)
        clock.now += 2
        #expect(fixture.engine.releaseDueValues(budget: 500) == true)
        // At most 500 deletions per slice (one of them may be k0's stale deadline, skipped).
        #expect((1_201 + 499...1_201 + 500).contains(fixture.seq))
        #expect(fixture.engine.releaseDueValues(budget: 500) == true)
        // The renewed k0's old deadline comes up too, and is skipped.
        #expect(fixture.engine.releaseDueValues(budget: 500) == false)
        #expect(fixture.value("o") == ["k0": 1])
        #expect(fixture.engine.leaseCount == 1)
    }

    /// Issue 33, row 6: `café` spelled NFC and NFD is one member, so a durable
    /// set of it through either spelling ends the lease under it.
    @Test(arguments: [("caf\u{e9}", "cafe\u{301}"), ("cafe\u{301}", "caf\u{e9}")])
    func aDurableSetAboveAnEphemeralValueEndsItsLeaseWhateverTheSpelling(leased: String, durable: String) {
        let other = fixture.makeClient()
        fixture.ok(["op": "set", "object": "e4", "keyPath": .string("\(leased).x"), "value": "mine", "ephemeral": true],
                   from: owner)
        fixture.ok(["op": "set", "object": "e4", "keyPath": .string(durable), "value": ["x": "durable"]], from: other)
        #expect(fixture.engine.leaseCount == 0)
        #expect(fixture.ok(["op": "get", "object": "e4", "keyPath": .string("\(leased).x")], from: other).reply
            .member("ephemeral") == nil)
        fixture.engine.closeClient(owner)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("e4", "\(durable).x") == "durable")
    }

    @Test(arguments: [("caf\u{e9}", "cafe\u{301}"), ("cafe\u{301}", "caf\u{e9}")])
    func aDurableSetAboveAValueWithATtlEndsItsDeadlineWhateverTheSpelling(leased: String, durable: String) {
        fixture.ok(["op": "set", "object": "e4", "keyPath": .string("\(leased).x"), "value": "mine", "ttl": 1],
                   from: owner)
        fixture.ok(["op": "set", "object": "e4", "keyPath": .string(durable), "value": ["x": "durable"]],
                   from: observer)
        #expect(fixture.engine.leaseCount == 0)
        clock.now += 2
        fixture.engine.releaseDueValues()
        #expect(fixture.value("e4", "\(durable).x") == "durable")
    }

    @Test func badLifetimesAreBadRequests() {
        for ttl: JSONValue in [0, -1, "5", 31_536_001, true] {
            fixture.fails(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ttl": ttl], from: owner,
                          code: "bad_request")
        }
        fixture.fails(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ephemeral": 1], from: owner,
                      code: "bad_request")
        fixture.fails(["op": "delete", "object": "o", "ephemeral": true], from: owner, code: "bad_request")
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ttl": 31_536_000], from: owner)
        fixture.ok(["op": "set", "object": "o", "keyPath": "k", "value": 1, "ttl": .number(JSONNumber(validatedLiteral: "0.5"))], from: owner)
    }

    @Test func ephemeralInABatchBelongsToTheBatchsConnection() {
        fixture.ok(["op": "batch", "ops": [["op": "set", "object": "p", "keyPath": "me", "value": 1, "ephemeral": true],
                                           ["op": "set", "object": "p", "keyPath": "all", "value": 1]]], from: owner)
        fixture.engine.closeClient(owner)
        fixture.engine.releaseDueValues()
        #expect(fixture.value("p") == ["all": 1])
    }

    @Test func restoredEphemeralValuesAreQueuedForDeletionAndDeadlinesGoOn() throws {
        let state = try SavedState(documents: ["p": ["gone": 1, "timed": 2, "kept": 3]], seq: 5, history: [],
                                   epoch: "e", leases: [
            SavedLease(object: "p", keyPath: "gone", ephemeral: true, deadline: nil),
            SavedLease(object: "p", keyPath: "timed", ephemeral: false, deadline: clock.now + 10),
        ])
        var configuration = EngineConfiguration()
        let clock = self.clock
        configuration.wallClock = { clock.now }
        let engine = Engine(configuration: configuration)
        engine.restore(state)
        engine.releaseDueValues()
        #expect(engine.store.document("p") == ["timed": 2, "kept": 3])
        #expect(engine.history.all.last?.cause == .disconnect)
        clock.now += 11
        engine.releaseDueValues()
        #expect(engine.store.document("p") == ["kept": 3])
    }

    /// Issue 33 row 4: each renewal left its old deadline in the heap, so a
    /// value renewed often with a long ttl held one entry per renewal.
    @Test func renewingATTLManyTimesKeepsTheDeadlineHeapBoundedAndItStillExpiresOnce() {
        fixture.ok(["op": "observe", "object": "lease", "keyPath": "holder", "options": ["new"]], from: observer)
        for renewal in 0..<5_000 {
            fixture.ok(["op": "set", "object": "lease", "keyPath": "holder", "value": .number(JSONNumber(renewal)),
                        "ttl": 31_536_000], from: owner)
        }
        #expect(fixture.engine.leaseTable.deadlines.count <= 130)
        #expect(fixture.engine.leaseCount == 1)
        let bytes = fixture.engine.leaseTable.bytes
        #expect(bytes > 0 && bytes < 10_000)
        _ = fixture.take(from: observer)
        clock.now += 31_536_001
        while fixture.engine.releaseDueValues() {}
        let events = fixture.take(from: observer).events
        #expect(events.count == 1 && events.first?.member("cause") == "ttl")
        #expect(fixture.engine.leaseTable.bytes == 0 || fixture.engine.leaseTable.deadlines.count <= 130)
    }

    /// Issue 34 item 5: a registry's entry whose only value was ephemeral or
    /// had a ttl went from its value but stayed in `list` as `{}`.
    @Test func anObjectThatOnlyHeldALeasedValueGoesWithItAndOneWithMoreStays() {
        let other = fixture.makeClient()
        fixture.ok(["op": "observe", "prefix": "svc/", "options": ["new"]], from: observer)
        fixture.ok(["op": "set", "object": "svc/web", "keyPath": "addr", "value": "a", "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "svc/db", "keyPath": "addr", "value": "b", "ephemeral": true], from: owner)
        fixture.ok(["op": "set", "object": "svc/db", "keyPath": "note", "value": "kept"], from: other)
        fixture.ok(["op": "set", "object": "svc/tmp", "keyPath": "addr", "value": "c", "ttl": 5], from: other)
        _ = fixture.take(from: observer)
        fixture.engine.closeClient(owner)
        clock.now += 6
        while fixture.engine.releaseDueValues() {}
        #expect(fixture.value("svc/web") == nil && fixture.value("svc/tmp") == nil)
        #expect(fixture.value("svc/db") == ["note": "kept"])
        let listed = fixture.ok(["op": "list", "prefix": "svc/"], from: other).reply.member("objects")
        expectJSON(listed, ["svc/db"])
        let events = fixture.take(from: observer).events
        #expect(Set(events.compactMap { $0.member("object")?.stringValue }) == ["svc/web", "svc/db", "svc/tmp"])
        #expect(events.first { $0.member("object") == "svc/web" }?.member("new") == .null)
    }
}
