import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `backup` from Swift: the snapshot comes in order, whole, as kvod made it.
@Suite(.onDedicatedThread) struct BackupClientTests {
    @Test func backupIntoHandsTheWholeSnapshotInOrderAndSaysItsSeq() async throws {
        let directory = try TemporaryDirectory()
        let kvod = try await KVODProcess(arguments: ["--data-dir", directory.path + "/data"])
        let connection = try connect(kvod)
        let value = String(repeating: "z", count: 3_000)
        var last: UInt64 = 0
        for index in 0..<40 { last = try await connection.set("o/\(index)", "v", to: value) }
        var copy = Data()
        let snapshot = try await connection.backup { copy.append($0) }
        #expect(snapshot.seq == last)
        #expect(UInt64(copy.count) == snapshot.size)
        #expect(snapshot.size > 49_152, "the copy came in more than one chunk")
        #expect(copy.starts(with: Array("SQLite format 3\0".utf8)))
        // Read to its end, the copy is gone from kvod.
        await #expect(throws: KVOClientError.self) { try await connection.backupChunk(at: 0) }
        // Any offset of a new one, in any order: the same bytes as a whole read.
        let again = try await connection.startBackup()
        let middle = try await connection.backupChunk(at: 1_000)
        #expect(middle == copy[1_000..<min(copy.count, 1_000 + middle.count)])
        #expect(again == snapshot)
    }
}
