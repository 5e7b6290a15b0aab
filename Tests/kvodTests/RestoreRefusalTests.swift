import CSQLite
import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `kvod --restore FILE` given what is no backup kvod can start on: a clear
/// error, no hang, and the data directory left as empty as it was found.
@Suite(.onDedicatedThread) struct RestoreRefusalTests {
    /// An SQLite file with kvod's table names and schema version but not its
    /// columns passes the file's check; kvod cannot open it, and must not
    /// leave it behind as the data directory's `kvod.db`.
    @Test func aFileKvodCannotStartOnLeavesTheDataDirectoryEmpty() throws {
        let folder = try TemporaryDirectory()
        let lookalike = folder.path + "/lookalike.db"
        var handle: OpaquePointer?
        #expect(sqlite3_open(lookalike, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, """
            CREATE TABLE meta (key, value); INSERT INTO meta VALUES ('seq', 5), ('epoch', 7);
            CREATE TABLE objects (x); CREATE TABLE members (y); PRAGMA user_version = 1
            """, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let data = folder.path + "/data"
        for attempt in 1...2 {
            let run = try CommandRun.run(KVODProcess.binaryURL, [
                "--socket", folder.path + "/k.sock", "--data-dir", data, "--restore", lookalike,
            ])
            #expect(run.status == 1, "attempt \(attempt): \(run)")
            #expect(run.stderr.contains("cannot start on \(lookalike)"), "attempt \(attempt): \(run.stderr)")
            #expect(!run.stderr.contains("restored \(data)"), "attempt \(attempt): \(run.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: data)) ?? []
            #expect(left.isEmpty, "attempt \(attempt): the data directory holds \(left)")
        }
    }

    @Test func aFileThatIsNoRegularFileIsRefusedWithoutWaitingOnIt() throws {
        let folder = try TemporaryDirectory()
        let fifo = folder.path + "/backup.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for source in [fifo, folder.path] {
            let run = try CommandRun.run(KVODProcess.binaryURL, [
                "--socket", folder.path + "/k.sock", "--data-dir", folder.path + "/data", "--restore", source,
            ], timeout: 10)
            #expect(run.status == 1, "\(source): \(run)")
            #expect(run.stderr.contains("\(source) is not a regular file"), "\(source): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.path + "/data/kvod.db"))
        }
    }

    /// A restore cut short (kvod killed while copying) leaves `kvod.db.restoring`
    /// in the data directory, and nothing else: the next `--restore` replaces it.
    @Test func aRestoreCutShortIsDoneAgainOverItsPartialCopy() throws {
        let folder = try TemporaryDirectory()
        let source = try KVODProcess(arguments: ["--data-dir", folder.path + "/source"])
        _ = try LineClient(path: source.socketPath).request(#"{"op":"set","object":"o","keyPath":"k","value":7}"#)
        let file = folder.path + "/b.db"
        let backup = try CommandRun.run(BackupTests.kvoctl, ["backup", file, "--socket", source.socketPath])
        #expect(backup.status == 0, "\(backup)")
        try source.terminate()
        let data = folder.path + "/data"
        #expect(mkdir(data, 0o700) == 0)
        let partial = try #require(FileManager.default.contents(atPath: file)).prefix(4_096)
        try partial.write(to: URL(fileURLWithPath: data + "/kvod.db.restoring"))
        let restored = try KVODProcess(arguments: ["--data-dir", data, "--restore", file])
        #expect(try LineClient(path: restored.socketPath).request(#"{"op":"get","object":"o","keyPath":"k"}"#)
            .reply["value"] == 7)
        #expect(!FileManager.default.fileExists(atPath: data + "/kvod.db.restoring"))
    }
}
