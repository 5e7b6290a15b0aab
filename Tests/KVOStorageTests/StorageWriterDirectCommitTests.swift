import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// ``StorageWriter/commitHere(_:)``: a batch committed on the caller's
/// thread (the event loop's, with `--sync batch`) is in the database like
/// one the writer thread commits, and the writer thread still checkpoints.
@Suite struct StorageWriterDirectCommitTests {
    /// Sets `o.k` to `value`, the seq-th change.
    static func batch(_ seq: UInt64, _ value: JSONValue) -> CommitBatch {
        CommitBatch(id: seq, changes: [ChangeRecord(object: "o", path: ["k"], kind: .setting, old: nil, new: value,
                                                     seq: seq, existingKeys: seq == 1 ? 0 : 1)],
                    documents: [("o", ["k": value])])
    }

    /// A writer on the database in `directory`, loaded, its thread started.
    static func startedWriter(in directory: String, _ syncMode: SyncMode) throws -> StorageWriter {
        let database = try StateDatabase(directory: directory, syncMode: syncMode, historyCapacity: 100_000)
        _ = try database.load()
        let writer = StorageWriter(database: database) {}
        writer.start()
        return writer
    }

    @Test func aBatchCommittedHereIsReportedAndThereAfterARestartBesideTheWritersOwn() throws {
        let directory = try TemporaryDirectory()
        do {
            let writer = try Self.startedWriter(in: directory.path, .batch)
            // The first commit since the start is the writer thread's.
            #expect(writer.commitHere(Self.batch(1, "first")) == .declined)
            writer.submit(Self.batch(1, "first"))
            try waitUntil("the writer thread to commit batch 1", timeout: 10) { writer.progress.committed == 1 }
            #expect(writer.commitHere(Self.batch(2, "here")) == .committed)
            #expect(writer.progress.committed == 2 && writer.progress.failure == nil)
            writer.submit(Self.batch(3, "queued"))
            try waitUntil("the writer thread to commit batch 3", timeout: 10) { writer.progress.committed == 3 }
            #expect(writer.commitHere(Self.batch(4, "here again")) == .committed)
            writer.stop()
            #expect(writer.progress.committed == 4 && writer.progress.failure == nil)
        }
        let state = try StateDatabase(directory: directory.path, syncMode: .batch, historyCapacity: 10).load()
        #expect(state.seq == 4)
        #expect(state.documents == ["o": ["k": "here again"]])
        #expect(state.history.map(\.new) == ["first", "here", "queued", "here again"])
    }

    /// ``StorageWriter/stop()`` returns once its thread holds the writer no
    /// more: the owner's reference is the last, so the database closes with
    /// it and the directory opens again at once (CI once found it busy).
    @Test func stopReturnsOnceTheThreadHasLetGoOfTheWriter() throws {
        let directory = try TemporaryDirectory()
        for round in 0..<50 {
            var writer = try Self.startedWriter(in: directory.path, .batch)
            writer.stop()
            #expect(isKnownUniquelyReferenced(&writer), "round \(round)")
        }
    }

    /// `always` syncs each commit on the commit syncer's thread: nothing is committed on the caller's.
    @Test func alwaysModeDeclines() throws {
        let directory = try TemporaryDirectory()
        let writer = try Self.startedWriter(in: directory.path, .always)
        defer { writer.stop() }
        #expect(writer.commitHere(Self.batch(1, "x")) == .declined)
        #expect(writer.progress.committed == 0)
    }

    /// Commits made here are checkpointed by the writer thread, which made
    /// the first one since the last checkpoint and so knows when the next is due.
    @Test func theWriterThreadCheckpointsCommitsMadeHere() throws {
        let directory = try TemporaryDirectory()
        let writer = try Self.startedWriter(in: directory.path, .batch)
        defer { writer.stop() }
        let file = directory.path + "/" + StateDatabase.fileName
        let sizeAtStart = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        let value = JSONValue.string(String(repeating: "v", count: 4096))
        var seq: UInt64 = 0
        var direct = 0
        try waitUntil("a checkpoint to grow kvod.db", timeout: 20) {
            seq += 1
            switch writer.commitHere(Self.batch(seq, value)) {
            case .committed: direct += 1
            case .declined: writer.submit(Self.batch(seq, value))
            case .failed: Issue.record("commit \(seq) failed: \(writer.progress)")
            }
            let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
            return size > sizeAtStart + 64 * 1024
        }
        #expect(direct > 0)
    }
}
