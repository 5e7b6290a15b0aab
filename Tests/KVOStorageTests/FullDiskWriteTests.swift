import Foundation
@testable import KVOEngine
@testable import KVOStorage
import KVOTestSupport
import KVOValues
import Testing

/// A commit that finds the disk full writes nothing and leaves the database
/// object as it was, so that the same batches can be written once there is
/// room (docs/DURABILITY.md, "A full disk"): the history it keeps counts
/// each change once.
@Suite(.enabled(if: SmallFilesystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
struct FullDiskWriteTests {
    @Test func aWriteThatFoundTheDiskFullIsWrittenAgainOnceAsIfItHadNeverFailed() throws {
        let disk = try SmallFilesystem(bytes: 1 << 20)
        defer { disk.remove() }
        let directory = disk.path + "/data"
        let big = JSONValue.string(String(repeating: "b", count: 300_000))
        do {
            let database = try StateDatabase(directory: directory, syncMode: .always, historyCapacity: 3)
            _ = try database.load()
            for seq in UInt64(1)...4 { try database.write([StorageWriterDirectCommitTests.batch(seq, .number(JSONNumber(Int(seq))))]) }
            try disk.fill("filler")
            var failure: StorageError?
            do {
                try database.write([StorageWriterDirectCommitTests.batch(5, big)])
            } catch {
                failure = error
            }
            #expect(failure?.isFull == true, "\(String(describing: failure))")
            disk.free("filler")
            try database.write([StorageWriterDirectCommitTests.batch(5, big)])
            try database.write([StorageWriterDirectCommitTests.batch(6, "after")])
        }
        let state = try StateDatabase(directory: directory, syncMode: .always, historyCapacity: 3).load()
        #expect(state.seq == 6)
        #expect(state.documents == ["o": ["k": "after"]])
        #expect(state.history.map(\.seq) == [4, 5, 6])
    }
}
