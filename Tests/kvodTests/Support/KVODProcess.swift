import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `kvod` binary, started on a temporary socket for one test.
final class KVODProcess: @unchecked Sendable {
    // @unchecked: `process` and `stderrPipe` are only touched by the test that owns this object.
    let socketPath: String
    let directory: String
    let process = Process()
    private let stderrPipe = Pipe()

    /// The folder that holds the test bundle also holds the built executables.
    static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    static var binaryURL: URL { productsDirectory.appendingPathComponent("kvod") }

    /// Starts kvod and, unless `waitForSocket` is false, waits until its
    /// socket accepts connections.
    init(arguments: [String] = [], environment: [String: String] = [:], socketPath: String? = nil,
         waitForSocket: Bool = true) throws {
        directory = try TemporaryDirectory.make()
        self.socketPath = socketPath ?? directory + "/kvod.sock"
        process.executableURL = Self.binaryURL
        process.arguments = ["--socket", self.socketPath] + arguments
        var env = Self.inheritedEnvironment
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        guard waitForSocket else { return }
        try waitUntil("kvod accepts connections on \(self.socketPath)", timeout: 20) {
            if !process.isRunning { throw TestFailure("kvod exited early: \(stderrText())") }
            return LineClient.canConnect(self.socketPath)
        }
    }

    /// The test runner's environment without what would change kvod's
    /// behaviour: its socket path, and what systemd sets when the tests
    /// themselves run under it (CI in a service).
    static var inheritedEnvironment: [String: String] {
        let ignored = ["KVOD_SOCKET", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                       "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "INVOCATION_ID"]
        return ProcessInfo.processInfo.environment.filter { !ignored.contains($0.key) }
    }

    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    func terminate(timeout: Double = 10) throws -> Int32 {
        signal(SIGTERM)
        return try waitForExit(timeout: timeout)
    }

    func waitForExit(timeout: Double = 10) throws -> Int32 {
        try waitUntil("kvod exits", timeout: timeout) { !process.isRunning }
        return process.terminationStatus
    }

    /// Everything kvod wrote to stderr so far (after it has exited: all of it).
    func stderrText() -> String {
        if process.isRunning { return "(still running)" }
        return String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A short-named temporary folder (socket paths must stay under 108 bytes).
enum TemporaryDirectory {
    static func make() throws -> String {
        var template = Array("/tmp/kvodtest-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: errno \(errno)") }
        return String(cString: made)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` seconds pass (then throws).
func waitUntil(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        usleep(5_000)
    }
}
