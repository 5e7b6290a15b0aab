import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// kvod started by `systemd-socket-activate`, as `kvod.socket` starts it:
/// it serves the descriptor it was passed and leaves systemd's socket file alone.
@Suite struct SocketActivationTests {
    @Test func socketActivatedKvodAdoptsDescriptorThreeAndLeavesTheSocketFile() throws {
        let notify = try NotifySocket()
        let kvod = try SocketActivatedKVOD(environment: ["NOTIFY_SOCKET": notify.address])
        let inodeBefore = try #require(UnixSockets.fileInode(kvod.socketPath))
        // The first connection makes the launcher exec kvod.
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true)
        try notify.waitFor("READY=1")
        // The one socket listening at the path is kvod's descriptor 3 ...
        let fdThree = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(kvod.pid)/fd/3")
        #expect(try UnixSockets.listeningInodes(at: kvod.socketPath).map { "socket:[\($0)]" } == [fdThree])
        // ... and the path was not re-bound: the same file, and a second client reaches the same kvod.
        #expect(UnixSockets.fileInode(kvod.socketPath) == inodeBefore)
        let second = try LineClient(path: kvod.socketPath)
        _ = try second.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == 1)

        kvod.signal(SIGTERM)
        try notify.waitFor("STOPPING=1")
        #expect(try kvod.waitForExit() == 0)
        let log = kvod.stderrText()
        #expect(log.contains("passed by systemd on fd 3"), "\(log)")
        // systemd's socket file outlives kvod: it is systemd's to remove.
        #expect(UnixSockets.fileInode(kvod.socketPath) == inodeBefore, "\(log)")
    }

    @Test func listenPIDOfAnotherProcessIsIgnoredAndKvodBindsItsOwnSocket() throws {
        let kvod = try KVODProcess(environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1"])
        #expect(try LineClient(path: kvod.socketPath).request(#"{"op":"ping"}"#).reply["ok"] == true)
        #expect(try kvod.terminate() == 0)
        // A socket kvod bound itself is removed at exit.
        #expect(UnixSockets.fileInode(kvod.socketPath) == nil)
    }

    @Test func passedDescriptorThatIsNotASocketIsRefusedWithAClearError() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/kvod.sock"
        // `exec` keeps the shell's pid, so LISTEN_PID=$$ names kvod; fd 3 is /dev/null.
        let (status, errors) = try runShell(
            #"LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --socket "$1" 3</dev/null"#,
            KVODProcess.binaryURL.path, socketPath)
        #expect(status == 1)
        #expect(errors.contains("descriptor 3 passed by systemd is not a socket"), "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func moreThanOnePassedSocketIsRefusedWithTheirNames() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (status, errors) = try runShell(
            #"LISTEN_PID=$$ LISTEN_FDS=2 LISTEN_FDNAMES=a:b exec "$0" --socket "$1" 3</dev/null 4</dev/null"#,
            KVODProcess.binaryURL.path, directory + "/kvod.sock")
        #expect(status == 1)
        #expect(errors.contains("systemd passed 2 sockets (a, b); kvod serves one"), "\(errors)")
    }

    /// Runs `script` with `sh -c` and positional arguments; returns the exit
    /// status and stderr.
    private func runShell(_ script: String, _ arguments: String...) throws -> (Int32, String) {
        let run = try CommandRun.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script] + arguments)
        return (run.status, run.stderr)
    }
}
