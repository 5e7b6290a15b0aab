import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `kvod` binary, started on a temporary socket for one test.
final class KVODProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this object.
    let socketPath: String
    let directory: String
    let process = Process()
    /// kvod's stderr goes to a file, not a pipe: a pipe nobody drains fills at
    /// 64 KiB and would block kvod's logging (and so kvod) in a long test.
    let stderrPath: String
    /// When kvod writes to a pipe instead, the pipe, drained into that file.
    private let stderrPipe: Pipe?

    /// The folder that holds the test bundle also holds the built executables.
    static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    static var binaryURL: URL { productsDirectory.appendingPathComponent("kvod") }

    /// Starts kvod and, unless `waitForSocket` is false, waits until its
    /// socket accepts connections. With `openFilesLimit`, kvod starts under
    /// that RLIMIT_NOFILE (soft and hard), set by a shell that then execs it,
    /// so `pid` is kvod's. With `stderrPipe`, kvod's stderr is that pipe
    /// (a test may need its device and inode), drained into `stderrPath`.
    init(arguments: [String] = [], environment: [String: String] = [:], socketPath: String? = nil,
         waitForSocket: Bool = true, openFilesLimit: Int? = nil, stderrPipe: Pipe? = nil) throws {
        self.stderrPipe = stderrPipe
        directory = try TemporaryDirectory.make()
        self.socketPath = socketPath ?? directory + "/kvod.sock"
        stderrPath = directory + "/stderr.log"
        let kvodArguments = ["--socket", self.socketPath] + arguments
        if let openFilesLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFilesLimit) && exec \"$0\" \"$@\"", Self.binaryURL.path]
                + kvodArguments
        } else {
            process.executableURL = Self.binaryURL
            process.arguments = kvodArguments
        }
        var env = Self.inheritedEnvironment
        env.merge(environment) { _, new in new }
        process.environment = env
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil),
              let stderrFile = FileHandle(forWritingAtPath: stderrPath) else {
            throw TestFailure("cannot create \(stderrPath)")
        }
        if let stderrPipe {
            stderrPipe.fileHandleForReading.readabilityHandler = { pipe in
                let data = pipe.availableData
                if data.isEmpty { pipe.readabilityHandler = nil } else { stderrFile.write(data) }
            }
            process.standardError = stderrPipe
        } else {
            process.standardError = stderrFile
        }
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
                       "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "INVOCATION_ID", "JOURNAL_STREAM"]
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

    /// Everything kvod wrote to stderr so far.
    func stderrText() -> String {
        String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
    }

    /// Waits until kvod's log has a line containing `text`; returns that line.
    @discardableResult
    func waitForLog(containing text: String, timeout: Double = 10) throws -> String {
        var found: String?
        try waitUntil("kvod logs \"\(text)\"", timeout: timeout) {
            found = stderrText().split(separator: "\n").last { $0.contains(text) }.map(String.init)
            return found != nil
        }
        return found ?? ""
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        stderrPipe?.fileHandleForReading.readabilityHandler = nil
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
