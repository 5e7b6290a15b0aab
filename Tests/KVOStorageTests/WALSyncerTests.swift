import Foundation
@testable import KVOStorage
import KVOTestSupport
import Testing

/// `batch` mode's sync thread, against real files.
@Suite struct WALSyncerTests {
    /// A sync it cannot make is reported: proof that a commit leads to a sync
    /// within the interval, and that a failed one stops kvod (the writer
    /// publishes it, and the daemon stops on a published failure).
    @Test func aCommitIsSyncedWithinTheIntervalAndAFailedSyncIsReported() throws {
        let directory = try TemporaryDirectory()
        let failures = Recorder<String>()
        let syncer = WALSyncer(walPath: directory.path + "/missing/kvod.db-wal", interval: 0.05) { failures.append($0) }
        syncer.start()
        defer { syncer.stop() }
        #expect(failures.values.isEmpty, "nothing committed, nothing to sync")
        syncer.noteCommit()
        try waitUntil("the failed sync to be reported", timeout: 10) { !failures.values.isEmpty }
        #expect(failures.values.count == 1)
        #expect(failures.values.first?.contains("cannot sync \(directory.path)/missing/kvod.db-wal") == true)
    }

    @Test func syncsOfAnExistingFileSucceedAndStopReturns() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/kvod.db-wal"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("frames".utf8)))
        let failures = Recorder<String>()
        let syncs = Recorder<Duration>()
        let syncer = WALSyncer(walPath: path, interval: 0.01, onSync: { syncs.append($0) }) { failures.append($0) }
        syncer.start()
        // Each commit once the last one's sync is done: a sync per commit.
        for round in 1...20 {
            syncer.noteCommit()
            try waitUntil("sync \(round) is done", timeout: 10, recheckEvery: nil) {
                syncs.count >= round || !failures.values.isEmpty
            }
        }
        syncer.stop()
        #expect(failures.values.isEmpty)
        #expect(syncs.count == 20)
    }
}

