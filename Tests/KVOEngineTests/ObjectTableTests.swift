@testable import KVOEngine
import Testing

/// The store and the shared controller keep an object in one shared entry:
/// each side's changes must leave the other's view, and the counts, intact.
@Suite struct ObjectTableTests {
    @Test func observingAnObjectWithoutADocumentCountsNoObjectAndItsSetStillReachesTheObserver() throws {
        let engine = Engine()
        let observer = EngineClient(engine)
        let setter = EngineClient(engine)
        _ = observer.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        #expect(engine.store.objectCount == 0)
        #expect(engine.store.objects.entry("o")?.observers != nil)
        #expect(engine.store.objects.entry("o")?.members == nil)

        _ = setter.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        #expect(engine.store.objectCount == 1)
        #expect(observer.takeLines().count == 1)
    }

    @Test func deletingTheDocumentKeepsTheObservationsAndUnobservingKeepsTheDocument() throws {
        let engine = Engine()
        let observer = EngineClient(engine)
        let setter = EngineClient(engine)
        _ = setter.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        _ = observer.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)

        _ = setter.send(#"{"op":"delete","object":"o"}"#)
        #expect(engine.store.objectCount == 0)
        #expect(observer.takeLines().count == 1, "the delete's event")
        _ = setter.send(#"{"op":"set","object":"o","keyPath":"k","value":2}"#)
        #expect(observer.takeLines().count == 1, "the observation outlived the document")

        _ = observer.send(#"{"op":"unobserve","object":"o"}"#)
        #expect(engine.store.objectCount == 1)
        #expect(try setter.reply(#"{"op":"get","object":"o","keyPath":"k"}"#)["value"] == 2)
    }

    @Test func anEntryWithNeitherDocumentNorObservationsIsDropped() {
        let engine = Engine()
        let client = EngineClient(engine)
        _ = client.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        _ = client.send(#"{"op":"observe","object":"o","keyPath":"k"}"#)
        _ = client.send(#"{"op":"delete","object":"o"}"#)
        #expect(engine.store.objects.entry("o") != nil, "still observed")
        _ = client.send(#"{"op":"unobserveAll"}"#)
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
