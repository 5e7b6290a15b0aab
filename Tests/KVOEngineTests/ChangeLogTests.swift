@testable import KVOEngine
import KVOTestSupport
import Testing

/// A change log that keeps everything in memory, as a data directory would on disk.
final class MemoryChangeLog: ChangeLog {
    var changes: [ChangeRecord] = []
    func record(_ change: ChangeRecord) { changes.append(change) }

    /// What a data directory would hold for `store` after these changes.
    func saved(from engine: Engine, historyCapacity: Int) throws -> SavedState {
        try SavedState(documents: engine.store.documents, seq: engine.store.seq,
                       history: Array(changes.suffix(historyCapacity)), epoch: engine.epoch)
    }
}

@Suite struct ChangeLogTests {
    @Test func everyChangeIsRecordedOnceInSeqOrderAndFailuresRecordNothing() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let log = MemoryChangeLog()
        engine.changeLog = log
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#, from: client)
        fixture.send(#"{"op":"set","object":"o","keyPath":"a.b.c","value":1}"#, from: client)  // not_an_object
        fixture.send(#"{"op":"delete","object":"o","keyPath":"nothing"}"#, from: client)  // not a change
        fixture.send(#"{"op":"insert","object":"o","keyPath":"list","values":[1,2]}"#, from: client)
        fixture.send(#"{"op":"delete","object":"o","keyPath":"a"}"#, from: client)
        fixture.send(#"{"op":"delete","object":"o"}"#, from: client)
        #expect(log.changes.map(\.seq) == [1, 2, 3, 4])
        #expect(log.changes.map(\.kind) == [.setting, .insertion, .setting, .setting])
        #expect(log.changes[0].existingKeys == 0, "o did not exist")
        #expect(log.changes[2].memberIndex == 0, "a was o's first member")
        #expect(log.changes == engine.history.all)
    }

    @Test func restoredEngineContinuesTheSeqAndReplaysAcrossTheRestart() throws {
        let firstFixture = EngineFixture()
        let first = firstFixture.engine
        let log = MemoryChangeLog()
        first.changeLog = log
        let client = firstFixture.makeClient()
        let observer = firstFixture.makeClient()
        firstFixture.send(#"{"op":"observe","object":"o","keyPath":"a","options":["new","old"]}"#, from: observer)
        firstFixture.send(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#, from: client)
        firstFixture.send(#"{"op":"set","object":"o","keyPath":"z","value":0}"#, from: client)
        firstFixture.send(#"{"op":"delete","object":"o","keyPath":"a.b"}"#, from: client)
        firstFixture.send(#"{"op":"set","object":"o","keyPath":"a.c","value":2}"#, from: client)
        let liveEvents = firstFixture.take(from: observer).text

        let secondFixture = EngineFixture()
        let second = secondFixture.engine
        second.restore(try log.saved(from: first, historyCapacity: 100))
        #expect(second.epoch == first.epoch)
        let restarted = secondFixture.makeClient()
        #expect(secondFixture.send(#"{"op":"get","object":"o"}"#, from: restarted).reply["value"] == ["a": ["c": 2], "z": 0])
        #expect(Array(secondFixture.send(#"{"op":"observe","object":"o","keyPath":"a","options":["new","old"],"since":0}"#, from: restarted).text.dropLast())
            == liveEvents)
        #expect(secondFixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: restarted).reply["seq"] == 5)
    }

    @Test func savedStateWithAGapOrAMismatchedSeqIsRefused() {
        let one = ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 1, existingKeys: 0)
        let three = ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 3, existingKeys: 0)
        #expect(throws: SavedState.Inconsistency.self) { try SavedState(documents: [:], seq: 3, history: [one, three], epoch: "e") }
        #expect(throws: SavedState.Inconsistency.self) { try SavedState(documents: [:], seq: 2, history: [one], epoch: "e") }
    }
}
