import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The default socket's directory is kvod's own, or kvod does not start
/// (docs/SECURITY.md, "The socket's directory"). kvod runs as `nobody` here,
/// with `$XDG_RUNTIME_DIR` pointing into a temporary folder: its default
/// socket is then `$XDG_RUNTIME_DIR/kvod.sock`, checked like `/tmp/kvod-<uid>`.
@Suite(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"), .onDedicatedThread)
struct SocketDirectoryTests {
    @Test func missingDefaultDirectoryIsCreatedMode0700AndServed() throws {
        let folder = try ForeignKVOD.folder(writable: true)
        let runtime = folder.path + "/run"
        let process = try ForeignKVOD.start([], environment: ["XDG_RUNTIME_DIR": runtime],
                                            socketPath: runtime + "/kvod.sock", stderrPath: folder.path + "/stderr")
        defer { process.terminate(); _ = try? ChildExit.wait(for: process) }
        var status = stat()
        #expect(lstat(runtime, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700 && status.st_uid == ForeignKVOD.uid)
        #expect(try LineClient(path: runtime + "/kvod.sock").request(#"{"op":"ping"}"#).reply["ok"] == true)
    }

    /// The directory, made by the test (root) before kvod starts, as another user could.
    @Test(arguments: [
        ("owned by another user", "belongs to uid 0"),
        ("writable by others", "writable by its group or by others (mode 0777)"),
        ("a symbolic link", "is a symbolic link"),
    ])
    func foreignOrOpenDefaultDirectoryIsRefusedSayingWhyAndWhatToDo(setup: String, complaint: String) throws {
        let folder = try ForeignKVOD.folder(writable: false)
        let runtime = folder.path + "/run"
        switch setup {
        case "owned by another user":
            mkdir(runtime, 0o755)
        case "writable by others":
            mkdir(runtime, 0o700)
            chmod(runtime, 0o777)
            chown(runtime, ForeignKVOD.uid, ForeignKVOD.gid)
        default:
            mkdir(folder.path + "/elsewhere", 0o700)
            chown(folder.path + "/elsewhere", ForeignKVOD.uid, ForeignKVOD.gid)
            symlink(folder.path + "/elsewhere", runtime)
        }
        let run = try ForeignKVOD.run([], environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(run.status == 1)
        #expect(run.stderr.contains(runtime) && run.stderr.contains(complaint), "\(run.stderr)")
        #expect(run.stderr.contains("--socket PATH"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: runtime + "/kvod.sock"))
    }

    @Test func anExplicitSocketInSomeoneElsesDirectoryIsTheOperatorsChoice() throws {
        let folder = try ForeignKVOD.folder(writable: true)
        chmod(folder.path, 0o777)
        let socket = folder.path + "/kvod.sock"
        let process = try ForeignKVOD.start(["--socket", socket], environment: [:], socketPath: socket,
                                            stderrPath: folder.path + "/stderr")
        defer { process.terminate(); _ = try? ChildExit.wait(for: process) }
        #expect(try LineClient(path: socket).request(#"{"op":"ping"}"#).reply["ok"] == true)
    }
}
