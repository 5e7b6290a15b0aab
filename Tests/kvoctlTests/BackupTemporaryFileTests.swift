import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `kvoctl backup FILE` writes `FILE.tmp` first, often as root and in a
/// directory others may write to (a shared backup folder): what another user
/// left under that name must neither receive the backup nor be written
/// through.
@Suite(.onDedicatedThread) struct BackupTemporaryFileTests {
    @Test func aFileOrSymlinkLeftAsFileDotTmpNeitherGetsTheBackupNorIsWrittenThrough() async throws {
        let folder = try TemporaryDirectory()
        let kvod = try await KVODProcess(arguments: ["--data-dir", folder.path + "/data"])
        _ = try await KVOCtl.run(kvod, ["set", "secret/db", "password", "hunter2"])

        // Another user's file, readable by all, waiting under FILE.tmp.
        let planted = folder.path + "/a.db"
        try Data("planted".utf8).write(to: URL(fileURLWithPath: planted + ".tmp"))
        #expect(chmod(planted + ".tmp", 0o666) == 0)
        #expect(chown(planted + ".tmp", 65_534, 65_534) == 0 || getuid() != 0)
        let first = try await KVOCtl.run(kvod, ["backup", planted])
        #expect(first.status == 0, "\(first)")
        var status = stat()
        #expect(stat(planted, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600, "the backup is readable by others: mode \(String(status.st_mode & 0o777, radix: 8))")
        #expect(status.st_uid == getuid(), "the backup belongs to uid \(status.st_uid), who planted FILE.tmp")

        // A symlink under FILE.tmp to a file of the user running kvoctl.
        let victim = folder.path + "/victim"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let linked = folder.path + "/b.db"
        #expect(symlink(victim, linked + ".tmp") == 0)
        let second = try await KVOCtl.run(kvod, ["backup", linked])
        #expect(second.status == 0, "\(second)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me", "kvoctl wrote through the symlink")
        var linkStatus = stat()
        #expect(lstat(linked, &linkStatus) == 0 && linkStatus.st_mode & S_IFMT == S_IFREG, "FILE is not a file of its own")
        withExtendedLifetime(folder) {}
    }
}
