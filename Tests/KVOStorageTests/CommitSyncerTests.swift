import Foundation
@testable import KVOStorage
import KVOTestSupport
import Testing

/// `always` mode's sync thread, against real files: a batch is reported
/// committed only by a sync made after it was noted.
@Suite struct CommitSyncerTests {
    @Test func everyNotedBatchIsReportedSyncedInOrderAndStopSyncsWhatIsLeft() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/kvod.db-wal"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("frames".utf8)))
        let synced = Recorder<UInt64>()
        let syncs = Recorder<Duration>()
        let failures = Recorder<String>()
        let syncer = CommitSyncer(walPath: path, onSync: { syncs.append($0) },
                                  onSynced: { synced.append($0) }, onFailure: { failures.append($0) })
        syncer.start()
        #expect(synced.values.isEmpty, "nothing noted, nothing synced")
        syncer.noteCommit(through: 1)
        try waitUntil("batch 1 to be synced", timeout: 10) { synced.values.last == 1 }
        for batch in UInt64(2)...50 { syncer.noteCommit(through: batch) }
        syncer.stop()
        // One sync may cover many batches, but each report follows a sync, and the last batch is reported.
        #expect(synced.values == synced.values.sorted() && synced.values.last == 50, "\(synced.values)")
        #expect(syncs.values.count == synced.values.count)
        #expect(failures.values.isEmpty)
    }

    @Test func aFailedSyncIsReportedAndNoBatchCountsAsCommitted() throws {
        let directory = try TemporaryDirectory()
        let synced = Recorder<UInt64>()
        let failures = Recorder<String>()
        let syncer = CommitSyncer(walPath: directory.path + "/missing/kvod.db-wal", onSync: { _ in },
                                  onSynced: { synced.append($0) }, onFailure: { failures.append($0) })
        syncer.start()
        defer { syncer.stop() }
        syncer.noteCommit(through: 1)
        try waitUntil("the failed sync to be reported", timeout: 10) { !failures.values.isEmpty }
        #expect(failures.values.first?.contains("cannot sync \(directory.path)/missing/kvod.db-wal") == true)
        #expect(synced.values.isEmpty)
    }
}
