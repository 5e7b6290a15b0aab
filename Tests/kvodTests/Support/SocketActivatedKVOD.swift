import Foundation
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real kvod started as `kvod.socket` starts it, by
/// `systemd-socket-activate`: it binds and listens on the socket at once,
/// and at the first connection execs kvod in its own process (same pid) with
/// the listening socket as descriptor 3 and `LISTEN_PID`/`LISTEN_FDS` set.
/// Like systemd, it passes no other environment than `-E NAME=VALUE`.
final class SocketActivatedKVOD: @unchecked Sendable {
    // @unchecked: `process` and `stderrPipe` are only touched by the test that owns this object.
    static let launcher = "/usr/bin/systemd-socket-activate"

    let socketPath: String
    let directory: String
    let process = ChildProcess()
    private let stderrPipe = Pipe()

    /// Starts the launcher and waits until its socket file exists; kvod
    /// itself starts only when a client connects.
    init(environment: [String: String] = [:], arguments: [String] = []) throws {
        directory = try TemporaryDirectory.make()
        socketPath = directory + "/kvod.sock"
        process.executableURL = URL(fileURLWithPath: Self.launcher)
        let settings = environment.sorted { $0.key < $1.key }.flatMap { ["-E", "\($0.key)=\($0.value)"] }
        process.arguments = ["-l", socketPath] + settings
            + [KVODProcess.binaryURL.path, "--socket", socketPath] + arguments
        process.environment = KVODProcess.inheritedEnvironment
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Listening, not just bound: a connection between bind and listen is
        // refused. Asked of the kernel's table, since connecting would start kvod.
        try waitUntil("systemd-socket-activate listens on \(socketPath)", timeout: 20) {
            if ChildExit.status(of: process) != nil { throw TestFailure("systemd-socket-activate exited: \(stderrText())") }
            return try !UnixSockets.listeningInodes(at: socketPath).isEmpty
        }
    }

    /// kvod's pid once it runs: the launcher execs it in place.
    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    func waitForExit(timeout: Double = 10) throws -> Int32 {
        try ChildExit.wait(for: process, timeout: timeout)
    }

    /// Everything written to stderr (launcher and kvod) once the process has exited.
    func stderrText() -> String {
        if ChildExit.status(of: process) == nil { return "(still running)" }
        return String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        ChildExit.kill(process)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
