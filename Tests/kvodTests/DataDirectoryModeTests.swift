import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What kvod creates in its data directory is its user's alone, whatever the
/// umask (docs/DURABILITY.md, "On disk"), and what it may not write is named.
@Suite(.onDedicatedThread) struct DataDirectoryModeTests {
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & 0o777 : nil
    }

    @Test func directoryIs0700AndFilesAre0600UnderAnOpenUmask() throws {
        let data = try DataDirectory()
        // The child inherits the umask at fork; set it back at once.
        let previous = umask(0)
        let started = Result { try KVODProcess(arguments: ["--data-dir", data.path]) }
        umask(previous)
        let kvod = try started.get()
        _ = try LineClient(path: kvod.socketPath).request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        #expect(Self.mode(data.path) == 0o700)
        #expect(Self.mode(data.path + "/kvod.db") == 0o600)
        #expect(Self.mode(data.path + "/kvod.db-wal") == 0o600)
        try kvod.terminate()
        #expect(!kvod.stderrText().contains("writable by"), "\(kvod.stderrText())")
    }

    @Test func dataDirectoryOthersMayWriteInIsAWarningAtStart() throws {
        let data = try DataDirectory()
        #expect(mkdir(data.path, 0o700) == 0 && chmod(data.path, 0o777) == 0)
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        try kvod.terminate()
        let line = kvod.lastLogLine(containing: "writable by its group or by others") ?? ""
        #expect(line.contains("warning") && line.contains(data.path) && line.contains("chmod go-w"),
                "\(kvod.stderrText())")
    }

    /// Root may write anywhere: kvod runs as nobody here.
    @Test(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"),
          arguments: ["directory", "database"])
    func readOnlyDataDirectoryOrDatabaseNamesThePathAndThePermission(readOnly: String) throws {
        let folder = try ForeignKVOD.folder(writable: false)
        let data = folder.path + "/data"
        #expect(mkdir(data, 0o755) == 0)
        let expected: String
        if readOnly == "database" {
            chown(data, ForeignKVOD.uid, ForeignKVOD.gid)
            #expect(FileManager.default.createFile(atPath: data + "/kvod.db", contents: nil))
            chmod(data + "/kvod.db", 0o644)
            expected = "cannot open \(data)/kvod.db for reading and writing (Permission denied): "
                + "kvod (uid \(ForeignKVOD.uid)) needs read and write permission on it"
        } else {
            expected = "kvod (uid \(ForeignKVOD.uid)) may not write in the data directory \(data) (Permission denied): "
                + "it needs write and search permission there"
        }
        let run = try ForeignKVOD.run(["--socket", folder.path + "/kvod.sock", "--data-dir", data])
        #expect(run.status == 1)
        #expect(run.stderr.contains(expected), "\(run.stderr)")
    }

    /// A data directory kvod's user may not create (under a directory of
    /// root's: /var/lib/kvod before the package made it) names the level that
    /// failed and what to do, not only "You don't have permission" (issue 34 item 8).
    @Test(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"))
    func aDataDirectoryThatCannotBeCreatedNamesWhereAndWhatToDo() throws {
        let folder = try ForeignKVOD.folder(writable: false)
        let data = folder.path + "/lib/kvod"
        let run = try ForeignKVOD.run(["--socket", folder.path + "/kvod.sock", "--data-dir", data])
        #expect(run.status == 1)
        #expect(run.stderr.contains("""
            kvod (uid \(ForeignKVOD.uid)) cannot create the data directory \(data): making \(folder.path)/lib in \
            \(folder.path) failed (Permission denied); create it as root for kvod's user
            """), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/lib"))
    }
}
