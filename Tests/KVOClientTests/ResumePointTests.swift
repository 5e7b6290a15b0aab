import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Resume points (epoch and seq) in KVOClient: what changes and `info` carry,
/// their text form, and `changes(…, since:)` from them, against the real kvod.
@Suite(.onDedicatedThread) struct ResumePointTests {
    @Test func aResumePointIsWrittenAndReadAsEpochColonSeq() {
        let point = ResumePoint(seq: 42, epoch: "9f0c2d41a7b35e18")
        #expect(point.description == "9f0c2d41a7b35e18:42")
        #expect(ResumePoint("9f0c2d41a7b35e18:42") == point)
        #expect(ResumePoint("42") == ResumePoint(seq: 42), "a bare seq reads as a point without an epoch")
        #expect(ResumePoint(seq: 7).description == "7")
        for bad in ["", ":", "abc", "9f0c:", ":42", "9f0c:+4", "9f0c:-1", "xyz:42", "9f0c:42:1", "9f0c: 42",
                    "9f0c:18446744073709551616", String(repeating: "a", count: 65) + ":1"] {
            #expect(ResumePoint(bad) == nil, "\(bad)")
        }
    }

    @Test func infoCarriesTheEpochTheOldestSeqAndThePointOfNow() async throws {
        let kvod = try await KVODProcess(arguments: ["--history", "2"])
        let connection = try connect(kvod)
        for value in 1...4 { try await connection.set("o", "k", to: value) }
        let info = try await connection.info()
        let epoch = try #require(info.epoch)
        #expect(epoch.count == 16 && epoch.allSatisfy(\.isHexDigit))
        #expect(info.oldestSeq == 3)
        #expect(info.resumePoint == ResumePoint(seq: 4, epoch: epoch))
        guard case .object(let members) = info.json else { throw TestFailure("info.json is not an object") }
        #expect(members["epoch"] == .string(epoch) && members["oldestSeq"] == 3)
    }

    @Test func everyChangeCarriesItsEpochAndAPriorChangeHasNoResumePoint() async throws {
        let kvod = try await KVODProcess()
        let writer = try connect(kvod)
        try await writer.set("o", "k", to: 1)
        try await writer.set("p/1", "k", to: 1)
        let epoch = try #require(try await writer.info().epoch)
        // Fresh connections: their first observe's initial changes come before any reply names the epoch.
        let initial = StreamRecorder(try connect(kvod).changes(of: "o", keyPath: "k", options: [.new, .initial, .prior]))
        let prefix = StreamRecorder(try connect(kvod).changes(prefix: "p/", keyPath: "k", options: [.initial]))
        #expect(try await initial.changes.waitForCount(1)[0].resumePoint == ResumePoint(seq: 2, epoch: epoch))
        #expect(try await prefix.changes.waitForCount(1)[0].resumePoint == ResumePoint(seq: 2, epoch: epoch))

        let seq = try await writer.set("o", "k", to: 2)
        let received = try await initial.changes.waitForCount(3)
        let (prior, live) = (received[1], received[2])
        #expect(prior.isPrior && prior.epoch == epoch && prior.resumePoint == nil,
                "resuming from a prior change would skip the change it announces")
        #expect(live.resumePoint == ResumePoint(seq: seq, epoch: epoch))
        // A later observer on the same connection gets its initial change from a get; it has the epoch too.
        let connection = try connect(kvod)
        let first = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new]))
        try await waitUntil("the first stream is registered", timeout: 10) {
            try await connection.observations().count == 1
        }
        let second = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new, .initial]))
        #expect(try await second.changes.waitForCount(1)[0].resumePoint == ResumePoint(seq: seq, epoch: epoch))
        _ = first
    }

    @Test func changesSinceAResumePointReplayWithItsEpochAndAnotherEpochIsCompacted() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let first = try await connection.set("o", "k", to: 1)
        try await connection.set("o", "k", to: 2)
        let point = try await connection.info().resumePoint
        let epoch = try #require(point.epoch)

        // A new connection, as after the program's own restart: the replayed change comes before any reply.
        let resumed = StreamRecorder(try connect(kvod).changes(of: "o", keyPath: "k", options: [.new],
                                                                  since: ResumePoint(seq: first, epoch: epoch)))
        let replayed = try await resumed.changes.waitForCount(1)[0]
        #expect(replayed.new == 2 && replayed.resumePoint == point)

        let foreign = ResumePoint(seq: first, epoch: "0123456789abcdef")
        let refused = StreamRecorder(try connect(kvod).changes(of: "o", keyPath: "k", since: foreign))
        let error = try await refused.errors.waitForCount(1)[0]
        #expect(error.code == .compacted && error.message.contains("0123456789abcdef"), "\(error)")
    }

    @Test func afterARestartWithoutDataAStreamResumedFromTheOldEpochFailsInsteadOfReplayingAnotherHistory()
        async throws
    {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        var kvod = try await KVODProcess(socketPath: path)
        let before = try KVOConnection(socketPath: path)
        for value in 1...3 { try await before.set("o", "k", to: value) }
        let point = ResumePoint(seq: 1, epoch: try await before.info().epoch)
        before.close()
        try await kvod.kill()
        kvod = try await KVODProcess(socketPath: path)
        // The new kvod's history also reaches seq 3, with other changes: a bare seq 1 would replay them.
        let after = try KVOConnection(socketPath: path)
        for value in 10...12 { try await after.set("o", "k", to: value) }
        let stream = StreamRecorder(after.changes(of: "o", keyPath: "k", options: [.new], since: point))
        #expect(try await stream.errors.waitForCount(1)[0].code == .compacted)
        #expect(stream.changes.count == 0)
        _ = kvod
    }
}
