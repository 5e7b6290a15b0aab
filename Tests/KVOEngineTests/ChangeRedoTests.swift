@testable import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// What a replay walks: an object's document at a resume point, found by
/// undoing its later changes from the current document, then each change
/// applied to it again, gives each document as it was, member order included.
@Suite struct ChangeRedoTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func applyingTheChangesAgainFromTheUndoneStartGivesEachDocumentAsItWas(seed: UInt64) {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        var rng = SplitMix64(seed: seed)
        var documentsAfter: [UInt64: [String: JSONValue]] = [:]
        for _ in 0..<400 {
            fixture.send(ReplayTests.randomRequest(&rng), from: client)
            documentsAfter[engine.store.seq] = engine.store.documents.mapValues { JSONValue.object($0) }
        }
        #expect(engine.store.seq > 150)
        for object in ReplayTests.objects {
            let changes = engine.history.all.filter { $0.object == object }
            var document = engine.store.value(object, at: [String]())
            for change in changes.reversed() { document = change.valueBefore(at: [], after: document) }
            #expect(document == nil, "\(object) did not exist before its first change")
            for change in changes {
                change.apply(to: &document)
                #expect(document == documentsAfter[change.seq]?[object], "\(object) after seq \(change.seq)")
                if document != documentsAfter[change.seq]?[object] { return }
            }
        }
    }
}
