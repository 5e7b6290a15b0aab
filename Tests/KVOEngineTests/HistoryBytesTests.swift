import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// `--history-bytes`: the history keeps at most so many bytes of changes,
/// together with `--history`'s count, the oldest going first.
@Suite struct HistoryBytesTests {
    /// A set of a 1,000-character string at a key of its own.
    private static func setLine(_ index: Int) -> String {
        #"{"op":"set","object":"o","keyPath":"k\#(index)","value":"\#(String(repeating: "v", count: 1_000))"}"#
    }

    @Test func bytesBoundTrimsTheOldestChangesFirst() throws {
        let limit = 5_000
        let fixture = EngineFixture(configuration: EngineConfiguration(historyCapacity: 1_000, historyBytes: limit))
        let engine = fixture.engine
        let client = fixture.makeClient()
        for index in 1...10 { fixture.send(Self.setLine(index), from: client) }
        let held = engine.history.all
        let perChange = try #require(held.last).bytes
        #expect(perChange > 1_000, "a record counts its value")
        #expect(held.count == limit / perChange, "as many of the newest as fit: \(held.count) of \(perChange) bytes")
        #expect(held.map(\.seq) == Array(UInt64(11 - held.count)...10), "the newest, consecutive")
        #expect(engine.history.bytes == held.reduce(0) { $0 + $1.bytes })
        #expect(engine.history.bytes <= limit)

        let oldest = Int(try #require(engine.history.oldestSeq))
        try #require(oldest > 2, "older changes went")
        let info = fixture.send(#"{"op":"info"}"#, from: client).reply
        #expect(info["oldestSeq"]?.intValue == oldest)
        #expect(info["memory"]?["history"]?.intValue == engine.history.bytes)
        // Resuming from just before the oldest replays; one further back is gone.
        let resumed = fixture.send(#"{"op":"observe","object":"o","since":\#(oldest - 1)}"#).text
        #expect(resumed.count == held.count + 1, "every held change, then the reply")
        let gone = fixture.send(#"{"op":"observe","object":"o","since":\#(oldest - 2)}"#).reply
        #expect(gone["error"]?["code"] == "compacted")
        #expect(gone["error"]?["oldestSeq"]?.intValue == oldest)
    }

    @Test func countBoundStillHoldsWhenTheBytesWouldAllowMore() throws {
        let fixture = EngineFixture(configuration: EngineConfiguration(historyCapacity: 3, historyBytes: 1 << 20))
        let engine = fixture.engine
        let client = fixture.makeClient()
        for index in 1...10 { fixture.send(Self.setLine(index), from: client) }
        #expect(engine.history.all.map(\.seq) == [8, 9, 10])
    }

    @Test func changeLargerThanTheBytesBoundLeavesNoHistoryAndTheCurrentSeqResumable() throws {
        let fixture = EngineFixture(configuration: EngineConfiguration(historyBytes: 800))
        let engine = fixture.engine
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"small","value":1}"#, from: client)
        #expect(engine.history.count == 1)
        fixture.send(Self.setLine(1), from: client)
        #expect(engine.history.count == 0 && engine.history.bytes == 0)
        let info = fixture.send(#"{"op":"info"}"#, from: client).reply
        #expect(info["oldestSeq"] == 3, "the next seq when nothing is held")
        #expect(fixture.send(#"{"op":"observe","object":"o","since":2}"#).reply["ok"] == true)
        #expect(fixture.send(#"{"op":"observe","object":"o","since":1}"#).reply["error"]?["code"] == "compacted")
        // Smaller changes are held again after it.
        fixture.send(#"{"op":"set","object":"o","keyPath":"small","value":2}"#, from: client)
        #expect(engine.history.all.map(\.seq) == [3])
    }

    @Test func restoreKeepsTheNewestChangesWithinTheBytes() throws {
        let firstFixture = EngineFixture()
        let first = firstFixture.engine
        let client = firstFixture.makeClient()
        for index in 1...10 { firstFixture.send(Self.setLine(index), from: client) }
        let saved = try SavedState(documents: first.store.documents, seq: first.store.seq, history: first.history.all,
                                   epoch: first.epoch)
        let second = Engine(configuration: EngineConfiguration(historyBytes: 3_000))
        second.restore(saved)
        #expect(second.history.all.map(\.seq) == [9, 10])
        #expect(second.store.sizeEstimate == first.store.sizeEstimate)
    }
}
