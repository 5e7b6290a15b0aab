import KVOTestSupport
import KVOValues
import Testing
@_spi(Fuzzing) @testable import KVOEngine

/// Issue 35 row 4 (and issue 33's "the same answers from every replay"): one
/// change's events to the observations under the changed path came in the
/// index's hash order, seeded per process, so two kvods, or one before and
/// after a restart, sent them in different orders. Now in key order.
@Suite struct EventOrderTests {
    static let keys = (0..<12).map { "k\($0)" } + ["é", "e\u{301}x", "Z", "a.b"]

    /// The key paths of the events a whole-document set sends to an observer
    /// that registered `keys` in the order given.
    private static func eventOrder(registering keys: [String]) -> [String] {
        let fixture = EngineFixture()
        let observer = fixture.makeClient()
        let writer = fixture.makeClient()
        let paths = keys.map { JSONValue.string($0) }
        fixture.ok(["op": "observe", "object": "o", "keyPaths": .array(paths), "options": ["new"]], from: observer)
        var document = JSONObject()
        for key in keys { document[key.split(separator: ".").first.map(String.init)!] = 1 }
        document["a"] = ["b": 2]
        fixture.ok(["op": "set", "object": "o", "value": .object(document)], from: writer)
        return fixture.take(from: observer).events.compactMap { $0.member("keyPath")?.stringValue }
    }

    @Test func aChangesEventsToSiblingObservationsComeInKeyOrderWhateverTheRegistrationOrder() {
        var random = SplitMix64(seed: 35)
        let first = Self.eventOrder(registering: Self.keys)
        #expect(first.count == Self.keys.count)
        #expect(first == first.sorted { CanonicalName.precedes($0, $1) }, "\(first)")
        for _ in 0..<5 {
            #expect(Self.eventOrder(registering: Self.keys.shuffled(using: &random)) == first)
        }
    }

    @Test func aReplayComesInTheSameOrderAsLive() {
        let fixture = EngineFixture()
        let live = fixture.makeClient()
        let paths = JSONValue.array(Self.keys.reversed().map { .string($0) })
        fixture.ok(["op": "observe", "object": "o", "keyPaths": paths, "options": ["new", "old"]], from: live)
        let writer = fixture.makeClient()
        fixture.ok(["op": "set", "object": "o", "value": ["k1": 1, "k7": 2, "é": 3, "a": ["b": 4]]], from: writer)
        fixture.ok(["op": "delete", "object": "o"], from: writer)
        let liveEvents = fixture.take(from: live).events
        let resumer = fixture.makeClient()
        let replayed = fixture.send(["op": "observe", "object": "o", "keyPaths": .array(Self.keys.map { .string($0) }),
                                     "options": ["new", "old"], "since": 0], from: resumer).events
        #expect(replayed == liveEvents)
    }
}
