import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 item 3: what computed key paths keep per object to follow changes
/// without a pass (``KeptAggregates``) is memory kvod holds for an observer;
/// a prefix `@max` over many objects keeps up to 64 extremes for each, so it
/// counts in the memory account, and leaves it with the objects, the arrays
/// or the observation.
@Suite final class KeptAggregateBytesTests {
    let (fixture, writer, observer) = EngineFixture.withTwoClients()

    @Test func aPrefixMaxObserverKeepsExtremesPerObjectInTheAccountUntilTheyGo() {
        let objects = (0..<200).map { "p/\($0)" }
        fixture.ok(["op": "observe", "prefix": "p/", "keyPath": "v.@max", "options": ["new"]], from: observer)
        let before = fixture.engine.memoryEstimate
        for object in objects {
            fixture.ok(["op": "set", "object": .string(object), "keyPath": "v",
                        "value": .array((0..<100).map { .number(JSONNumber($0 * 1_000_003)) })], from: writer)
        }
        let kept = fixture.shared.aggregateBytes
        // 64 extremes of about 50 bytes each, for every object.
        #expect(kept >= objects.count * 64 * 50, "\(kept) bytes for \(objects.count) objects' extremes")
        let documents = fixture.engine.store.sizeEstimate
        #expect(fixture.engine.memoryEstimate - before >= kept + documents - 200, "documents and aggregates both")
        let info = fixture.send(["op": "info"], from: writer).reply
        #expect(info.member("memory")?.member("aggregates")?.intValue == kept)

        // Half the objects go: their aggregates too.
        for object in objects.prefix(100) { fixture.ok(["op": "delete", "object": .string(object)], from: writer) }
        #expect(fixture.shared.aggregateBytes <= kept / 2 + 100, "\(fixture.shared.aggregateBytes) after deletes")
        #expect(fixture.shared.aggregateBytes > 0)
        // An insert moves the kept extremes but not far.
        fixture.ok(["op": "insert", "object": "p/150", "keyPath": "v", "value": 7], from: writer)
        // The observation goes: nothing is kept.
        fixture.ok(["op": "unobserve", "prefix": "p/", "keyPath": "v.@max"], from: observer)
        fixture.finishSlicedWork()
        #expect(fixture.shared.aggregateBytes == 0)
    }
}
