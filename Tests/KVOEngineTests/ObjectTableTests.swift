@testable import KVOEngine
import Testing

/// The store and the shared controller keep an object in one shared entry:
/// each side's changes must leave the other's view, and the counts, intact.
@Suite struct ObjectTableTests {
    @Test func observingAnObjectWithoutADocumentCountsNoObjectAndItsSetStillReachesTheObserver() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let observer = fixture.makeClient()
        let setter = fixture.makeClient()
        _ = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#, from: observer).text
        #expect(engine.store.objectCount == 0)
        #expect(engine.store.objects.entry("o")?.observers != nil)
        #expect(engine.store.objects.entry("o")?.members == nil)

        _ = fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: setter).text
        #expect(engine.store.objectCount == 1)
        #expect(fixture.take(from: observer).text.count == 1)
    }

    @Test func deletingTheDocumentKeepsTheObservationsAndUnobservingKeepsTheDocument() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let observer = fixture.makeClient()
        let setter = fixture.makeClient()
        _ = fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: setter).text
        _ = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#, from: observer).text

        _ = fixture.send(#"{"op":"delete","object":"o"}"#, from: setter).text
        #expect(engine.store.objectCount == 0)
        #expect(fixture.take(from: observer).text.count == 1, "the delete's event")
        _ = fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":2}"#, from: setter).text
        #expect(fixture.take(from: observer).text.count == 1, "the observation outlived the document")

        _ = fixture.send(#"{"op":"unobserve","object":"o"}"#, from: observer).text
        #expect(engine.store.objectCount == 1)
        #expect(fixture.send(#"{"op":"get","object":"o","keyPath":"k"}"#, from: setter).reply["value"] == 2)
    }

    @Test func anEntryWithNeitherDocumentNorObservationsIsDropped() {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        _ = fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client).text
        _ = fixture.send(#"{"op":"observe","object":"o","keyPath":"k"}"#, from: client).text
        _ = fixture.send(#"{"op":"delete","object":"o"}"#, from: client).text
        #expect(engine.store.objects.entry("o") != nil, "still observed")
        _ = fixture.send(#"{"op":"unobserveAll"}"#, from: client).text
        #expect(engine.store.objects.entry("o") == nil)
        #expect(engine.store.objectCount == 0)
    }

    @Test func restoringDocumentsKeepsObservationsAndCountsOnlyDocuments() {
        let objects = ObjectTable()
        let store = Store(objects: objects)
        let shared = SharedController(objects: objects)
        let root = shared.nodeCreating(.object("watched"), ObservedPath(components: ["k"]))
        store.restore(documents: ["a": ["x": 1], "b": [:]], seq: 7)
        #expect(store.objectCount == 2)
        #expect(objects.entry("watched")?.observers != nil)
        #expect(root.parent != nil)
        store.restore(documents: ["watched": ["k": 2]], seq: 8)
        #expect(store.objectCount == 1)
        #expect(objects.entry("a") == nil)
        #expect(store.value("watched", at: ["k"]) == 2)
    }
}
