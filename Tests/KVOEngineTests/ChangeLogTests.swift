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
        let engine = Engine()
        let log = MemoryChangeLog()
        engine.changeLog = log
        let client = EngineClient(engine)
        client.send(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#)
        client.send(#"{"op":"set","object":"o","keyPath":"a.b.c","value":1}"#)  // not_an_object
        client.send(#"{"op":"delete","object":"o","keyPath":"nothing"}"#)  // not a change
        client.send(#"{"op":"insert","object":"o","keyPath":"list","values":[1,2]}"#)
        client.send(#"{"op":"delete","object":"o","keyPath":"a"}"#)
        client.send(#"{"op":"delete","object":"o"}"#)
        #expect(log.changes.map(\.seq) == [1, 2, 3, 4])
        #expect(log.changes.map(\.kind) == [.setting, .insertion, .setting, .setting])
        #expect(log.changes[0].existingKeys == 0, "o did not exist")
        #expect(log.changes[2].memberIndex == 0, "a was o's first member")
        #expect(log.changes == engine.history.all)
    }

    @Test func restoredEngineContinuesTheSeqAndReplaysAcrossTheRestart() throws {
        let first = Engine()
        let log = MemoryChangeLog()
        first.changeLog = log
        let client = EngineClient(first)
        let observer = EngineClient(first)
        observer.send(#"{"op":"observe","object":"o","keyPath":"a","options":["new","old"]}"#)
        client.send(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#)
        client.send(#"{"op":"set","object":"o","keyPath":"z","value":0}"#)
        client.send(#"{"op":"delete","object":"o","keyPath":"a.b"}"#)
        client.send(#"{"op":"set","object":"o","keyPath":"a.c","value":2}"#)
        let liveEvents = observer.takeLines()

        let second = Engine()
        second.restore(try log.saved(from: first, historyCapacity: 100))
        #expect(second.epoch == first.epoch)
        let restarted = EngineClient(second)
        #expect(try restarted.reply(#"{"op":"get","object":"o"}"#)["value"] == ["a": ["c": 2], "z": 0])
        #expect(Array(restarted.send(#"{"op":"observe","object":"o","keyPath":"a","options":["new","old"],"since":0}"#).dropLast())
            == liveEvents)
        #expect(try restarted.reply(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)["seq"] == 5)
    }

    @Test func savedStateWithAGapOrAMismatchedSeqIsRefused() {
        let one = ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 1, existingKeys: 0)
        let three = ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: 1, seq: 3, existingKeys: 0)
        #expect(throws: SavedState.Inconsistency.self) { try SavedState(documents: [:], seq: 3, history: [one, three], epoch: "e") }
        #expect(throws: SavedState.Inconsistency.self) { try SavedState(documents: [:], seq: 2, history: [one], epoch: "e") }
    }
}
