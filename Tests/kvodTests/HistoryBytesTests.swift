import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `--history-bytes` with `--data-dir`: large values do not make the history
/// grow past its bytes, in memory or on disk, and a restart keeps to the same
/// bound (and to a smaller one given then).
@Suite(.onDedicatedThread) struct HistoryBytesTests {
    /// A set of a 100 KB string at a key of its own.
    private static func largeSet(_ index: Int) -> String {
        #"{"op":"set","object":"big","keyPath":"k\#(index)","value":"\#(String(repeating: "h", count: 100_000))"}"#
    }

    private static func info(_ kvod: KVODProcess) throws -> JSONValue {
        try LineClient(path: kvod.socketPath).request(#"{"op":"info"}"#).reply
    }

    @Test func historyOfLargeValuesFollowsTheBytesBoundAcrossRestarts() throws {
        let data = try TemporaryDirectory()
        func start(_ historyBytes: String) throws -> KVODProcess {
            try KVODProcess(arguments: ["--data-dir", data.path, "--history-bytes", historyBytes])
        }
        var kvod = try start("1m")
        let writer = try LineClient(path: kvod.socketPath)
        for index in 1...30 { #expect(try writer.request(Self.largeSet(index)).reply["seq"]?.intValue == index) }
        let before = try Self.info(kvod)
        let held = try #require(before["historyChanges"]?.intValue)
        let oldest = try #require(before["oldestSeq"]?.intValue)
        // About 100 KB each: ten fit in 1 MiB, not eleven.
        #expect(held == 10, "\(before)")
        #expect(oldest == 31 - held)
        #expect((before["memory"]?["history"]?.intValue ?? .max) <= 1 << 20)
        try kvod.terminate()

        // The disk kept no more than memory did, but for the rows that fell
        // out since the writer's last trim step (an eighth of the bytes).
        kvod = try start("64m")
        let larger = try Self.info(kvod)
        #expect((held...held + 1).contains(larger["historyChanges"]?.intValue ?? 0), "\(larger)")
        try kvod.terminate()

        kvod = try start("1m")
        let after = try Self.info(kvod)
        #expect(after["oldestSeq"]?.intValue == oldest, "\(after)")
        #expect(after["historyChanges"]?.intValue == held)
        let observer = try LineClient(path: kvod.socketPath)
        let replay = try observer.request(#"{"op":"observe","object":"big","since":\#(oldest - 1)}"#)
        #expect(replay.reply["ok"] == true)
        // Without `new`: each event would carry the whole 3 MB document.
        #expect(replay.events.map { $0["seq"]?.intValue } == Array(oldest...30), "every held change, replayed")
        let gone = try observer.request(#"{"op":"observe","object":"big","keyPath":"k1","since":\#(oldest - 2)}"#).reply
        #expect(gone["error"]?["code"] == "compacted")
        #expect(gone["error"]?["oldestSeq"]?.intValue == oldest)
        try kvod.terminate()

        // That start deleted what it did not hold: a larger bound finds nothing older.
        kvod = try start("64m")
        #expect(try Self.info(kvod)["oldestSeq"]?.intValue == oldest)
        try kvod.terminate()

        // A smaller bound at start keeps fewer, and deletes the rest for good.
        kvod = try start("512k")
        let smaller = try Self.info(kvod)
        let smallerOldest = try #require(smaller["oldestSeq"]?.intValue)
        #expect(smaller["historyChanges"]?.intValue == 5 && smallerOldest == 26, "\(smaller)")
        try kvod.terminate()
        kvod = try start("64m")
        #expect(try Self.info(kvod)["oldestSeq"]?.intValue == smallerOldest)
        #expect(try LineClient(path: kvod.socketPath).request(#"{"op":"get","object":"big","keyPath":"k1"}"#)
            .reply["value"]?.stringValue?.count == 100_000, "the values themselves are all there")
    }
}
