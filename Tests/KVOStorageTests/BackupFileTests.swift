import CSQLite
import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// The storage side of `backup`: the writer's snapshot, the check of a
/// backup file, and a restore into a new data directory.
@Suite struct BackupFileTests {
    /// Sets `o<n>.v` to a value of about 1 KiB, the n-th change.
    static func batch(_ seq: UInt64) -> CommitBatch {
        let value = JSONValue.string(String(repeating: "v", count: 1_000) + String(seq))
        return CommitBatch(id: seq, changes: [ChangeRecord(object: "o\(seq)", path: ["v"], kind: .setting, old: nil,
                                                            new: value, seq: seq, existingKeys: 0)],
                           documents: [("o\(seq)", ["v": value])])
    }

    /// Writes `count` changes through a writer, takes a snapshot while more
    /// are submitted, and writes the snapshot to `file`.
    static func snapshot(in directory: String, to file: String, count: UInt64) throws -> (DatabaseSnapshot, UInt64) {
        let database = try StateDatabase(directory: directory, syncMode: .off, historyCapacity: 100_000)
        _ = try database.load()
        let writer = StorageWriter(database: database) { WaitSignal.shared.notify() }
        writer.start()
        defer { writer.stop() }
        for seq in 1...count { writer.submit(batch(seq)) }
        let ticket = writer.takeSnapshot()
        for seq in count + 1...count + 50 { writer.submit(batch(seq)) }
        var finished: (ticket: UInt64, result: Result<DatabaseSnapshot, StorageError>)?
        try waitUntil("the snapshot is made", timeout: 20, recheckEvery: nil) {
            finished = finished ?? writer.takeFinishedSnapshot()
            return finished != nil
        }
        #expect(finished?.ticket == ticket)
        let snapshot = try finished!.result.get()
        #expect(!FileManager.default.fileExists(atPath: directory + "/kvod-backup.tmp"), "the copy keeps no name")
        var bytes: [UInt8] = []
        while UInt64(bytes.count) < snapshot.size { bytes += try snapshot.read(at: UInt64(bytes.count), count: 50_000) }
        #expect(try snapshot.read(at: snapshot.size, count: 10).isEmpty)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return (snapshot, count + 50)
    }

    @Test func aSnapshotHoldsEveryChangeCommittedBeforeItWasAskedForAndVerifies() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/backup.db"
        let (snapshot, submitted) = try Self.snapshot(in: directory.path + "/data", to: file, count: 2_000)
        #expect(snapshot.seq >= 2_000 && snapshot.seq <= submitted)
        let contents = try BackupFile.verify(file)
        #expect(contents == BackupFile.Contents(seq: snapshot.seq, schemaVersion: StateDatabase.schemaVersion,
                                                objects: Int(snapshot.seq)))
        // A file of its own: rollback journal, nothing beside it.
        let header = try #require(FileManager.default.contents(atPath: file))
        #expect(header[18] == 1 && header[19] == 1)
        #expect(!FileManager.default.fileExists(atPath: file + "-wal"))

        let restored = directory.path + "/restored"
        #expect(try DataDirectoryRestore.restore(file, into: restored) == contents)
        let original = try StateDatabase(directory: directory.path + "/data", syncMode: .off, historyCapacity: 100_000).load()
        let state = try StateDatabase(directory: restored, syncMode: .off, historyCapacity: 100_000).load()
        #expect(state.seq == snapshot.seq)
        #expect(state.documents == original.documents.filter { UInt64($0.key.dropFirst())! <= snapshot.seq })
        #expect(state.epoch != original.epoch)
        #expect(throws: StorageError.self) { try DataDirectoryRestore.restore(file, into: restored) }
    }

    @Test func verifyRefusesWhatIsNoWholeBackupOfAReadableVersion() throws {
        let directory = try TemporaryDirectory()
        let good = directory.path + "/good.db"
        _ = try Self.snapshot(in: directory.path + "/data", to: good, count: 300)
        let bytes = try #require(FileManager.default.contents(atPath: good))
        func refusal(_ path: String) -> String {
            do {
                _ = try BackupFile.verify(path)
                return "accepted"
            } catch {
                return error.description
            }
        }
        let truncated = directory.path + "/truncated.db"
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        #expect(refusal(truncated).contains("damaged") || refusal(truncated).contains("cannot read"), "\(refusal(truncated))")

        let beside = directory.path + "/live.db"
        try bytes.write(to: URL(fileURLWithPath: beside))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: beside + "-wal"))
        #expect(refusal(beside).contains("-wal exists beside it"), "\(refusal(beside))")

        var newer = bytes
        newer[63] = 99
        let newerPath = directory.path + "/newer.db"
        try newer.write(to: URL(fileURLWithPath: newerPath))
        #expect(refusal(newerPath).contains("schema version 99, written by a newer kvod"), "\(refusal(newerPath))")

        let foreign = directory.path + "/foreign.db"
        var handle: OpaquePointer?
        sqlite3_open(foreign, &handle)
        sqlite3_exec(handle, "CREATE TABLE t (x); PRAGMA user_version = 3", nil, nil, nil)
        sqlite3_close(handle)
        #expect(refusal(foreign).contains("not kvod's (no table meta)"), "\(refusal(foreign))")
        #expect(refusal(directory.path + "/missing.db").contains("cannot read"))
    }

    /// A disk that fills while the copy is written: the step's error is a
    /// full disk's (kvod answers `storage_full`), and giving the copy up removes it.
    @Test(.enabled(if: SmallFilesystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func aCopyThatFindsTheDiskFullFailsAsAFullDiskAndLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        let database = try StateDatabase(directory: directory.path + "/data", syncMode: .off, historyCapacity: 100_000)
        _ = try database.load()
        try database.write((1...300).map(Self.batch))
        let disk = try SmallFilesystem(bytes: 256 << 10)
        defer { disk.remove() }
        let path = disk.path + "/kvod-backup.tmp"
        let copy = try SnapshotCopy(of: database.connection, into: path)
        var failure: StorageError?
        do {
            while try !copy.step(pages: 64) {}
        } catch {
            failure = error
        }
        #expect(failure?.isFull == true, "\(String(describing: failure))")
        copy.abandon()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
