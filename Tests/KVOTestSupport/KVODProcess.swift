import Foundation
import Glibc

/// The real `kvod` binary, started on a temporary socket for one test.
///
/// Every wait has a synchronous form, for synchronous tests, and an async one
/// that suspends instead of blocking a thread of the cooperative pool; async
/// tests get the async forms (`try await KVODProcess()`).
public final class KVODProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this object.
    public let socketPath: String
    /// A folder of this kvod's own, removed with it: its stderr log, and its
    /// socket unless one was given.
    public let directory: String
    public let process = ChildProcess()
    /// kvod's stderr goes to a file, not a pipe: kvod logs every connection,
    /// and a pipe nobody drains fills at 64 KiB and would block kvod.
    public let stderrPath: String
    /// When kvod writes to a pipe instead, the pipe, drained into that file.
    private let stderrPipe: Pipe?
    /// Copies `stderrPipe` into the log file.
    private var stderrDrain: PipeDrain?
    /// How often a wait for the exit looks at the kernel's record (``ChildExit``):
    /// nothing else tells a waiter that a child has exited.
    private static let lateExitRecheck = 0.05

    /// The folder that holds the test bundle also holds the built executables.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public static var binaryURL: URL { productsDirectory.appendingPathComponent("kvod") }

    /// The test runner's environment without what would change kvod's (or
    /// kvoctl's) behaviour: the socket path and every other `KVOD_` setting,
    /// and what systemd sets when the tests themselves run under it (CI in a service).
    public static var inheritedEnvironment: [String: String] {
        let ignored = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                       "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "INVOCATION_ID", "JOURNAL_STREAM"]
        return ProcessInfo.processInfo.environment.filter { !ignored.contains($0.key) && !$0.key.hasPrefix("KVOD_") }
    }

    /// Starts kvod and, unless `waitForSocket` is false, waits until its
    /// socket accepts connections. With `socketPath`, kvod listens there
    /// (e.g. to restart on the same path; the caller owns that folder). With
    /// `openFilesLimit`, kvod starts under that RLIMIT_NOFILE (soft and hard),
    /// set by a shell that then execs it, so `pid` is kvod's. With
    /// `stderrPipe`, kvod's stderr is that pipe (a test may need its device
    /// and inode), drained into `stderrPath`. With `launcher`, kvod runs as
    /// `launcher + [kvod, …]` (``NetworkNamespace/exec``; it must exec kvod, so `pid` is kvod's).
    @available(*, noasync, message: "blocks a cooperative thread; use try await KVODProcess(…)")
    public convenience init(arguments: [String] = [], environment: [String: String] = [:], socketPath: String? = nil,
                            waitForSocket: Bool = true, openFilesLimit: Int? = nil, stderrPipe: Pipe? = nil,
                            launcher: [String] = []) throws {
        try self.init(launching: arguments, environment: environment, socketPath: socketPath,
                      openFilesLimit: openFilesLimit, stderrPipe: stderrPipe, launcher: launcher)
        if waitForSocket { try waitUntil(readiness, timeout: 20) { try acceptsConnections() } }
    }

    /// Starts kvod as the synchronous initializer does, suspending while it waits.
    public convenience init(arguments: [String] = [], environment: [String: String] = [:], socketPath: String? = nil,
                            waitForSocket: Bool = true, openFilesLimit: Int? = nil,
                            stderrPipe: Pipe? = nil, launcher: [String] = []) async throws {
        try self.init(launching: arguments, environment: environment, socketPath: socketPath,
                      openFilesLimit: openFilesLimit, stderrPipe: stderrPipe, launcher: launcher)
        if waitForSocket { try await waitUntil(readiness, timeout: 20) { () async throws -> Bool in try acceptsConnections() } }
    }

    private init(launching arguments: [String], environment: [String: String], socketPath: String?,
                 openFilesLimit: Int?, stderrPipe: Pipe?, launcher: [String]) throws {
        self.stderrPipe = stderrPipe
        directory = try TemporaryDirectory.make()
        self.socketPath = socketPath ?? directory + "/kvod.sock"
        stderrPath = directory + "/stderr.log"
        var command = [Self.binaryURL.path, "--socket", self.socketPath] + arguments
        if let openFilesLimit {
            command = ["/bin/sh", "-c", "ulimit -n \(openFilesLimit) && exec \"$0\" \"$@\""] + command
        }
        command = launcher + command
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = Self.inheritedEnvironment.merging(environment) { _, new in new }
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil),
              let stderrFile = FileHandle(forWritingAtPath: stderrPath) else {
            throw TestFailure("cannot create \(stderrPath)")
        }
        if let stderrPipe {
            process.standardError = stderrPipe
        } else {
            process.standardError = stderrFile
        }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        if let stderrPipe {
            stderrDrain = PipeDrain(stderrPipe.fileHandleForReading) { data in stderrFile.write(data) }
        }
    }

    private var readiness: String { "kvod accepts connections on \(socketPath)" }

    private func acceptsConnections() throws -> Bool {
        if ChildExit.status(of: process) != nil { throw TestFailure("kvod exited early: \(stderrText())") }
        return UnixSockets.canConnect(socketPath)
    }

    public var pid: Int32 { process.processIdentifier }

    public func signal(_ number: Int32) { Glibc.kill(process.processIdentifier, number) }

    /// Sends SIGTERM and waits for the exit status.
    @discardableResult
    @available(*, noasync, message: "blocks a cooperative thread")
    public func terminate(timeout: Double = 10) throws -> Int32 {
        signal(SIGTERM)
        return try waitForExit(timeout: timeout)
    }

    /// Sends SIGTERM and waits for the exit status, suspending meanwhile.
    @discardableResult
    public func terminate(timeout: Double = 10) async throws -> Int32 {
        signal(SIGTERM)
        return try await waitForExit(timeout: timeout)
    }

    /// Kills kvod with SIGKILL (no goodbye to its clients) and waits until it is gone.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func kill() throws {
        signal(SIGKILL)
        try waitForExit()
    }

    /// Kills kvod with SIGKILL and waits until it is gone, suspending meanwhile.
    public func kill() async throws {
        signal(SIGKILL)
        try await waitForExit()
    }

    /// Waits until kvod has exited; returns its status.
    @discardableResult
    @available(*, noasync, message: "blocks a cooperative thread")
    public func waitForExit(timeout: Double = 10) throws -> Int32 {
        var status: Int32?
        try waitUntil("kvod exits", timeout: timeout, recheckEvery: Self.lateExitRecheck) {
            status = ChildExit.status(of: process)
            return status != nil
        }
        return status ?? -1
    }

    /// Waits until kvod has exited, suspending meanwhile; returns its status.
    @discardableResult
    public func waitForExit(timeout: Double = 10) async throws -> Int32 {
        var status: Int32?
        try await waitUntil("kvod exits", timeout: timeout, recheckEvery: Self.lateExitRecheck) { () async -> Bool in
            status = ChildExit.status(of: process)
            return status != nil
        }
        return status ?? -1
    }

    /// Everything kvod wrote to stderr so far.
    public func stderrText() -> String {
        String(decoding: Self.bytes(ofGrowingFile: stderrPath), as: UTF8.self)
    }

    /// A file's bytes read with read(2) to its current end. Not
    /// `FileManager.contents(atPath:)`: swift-corelibs-foundation 6.3 leaks a
    /// 4 KiB buffer when the file grows while it reads (LeakSanitizer, CI stop 37),
    /// and kvod's log grows while tests poll it.
    static func bytes(ofGrowingFile path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Waits until kvod's log has a line containing `text`; returns that line.
    @discardableResult
    @available(*, noasync, message: "blocks a cooperative thread")
    public func waitForLog(containing text: String, timeout: Double = 10) throws -> String {
        // Woken by each write to the log (inotify), not polled.
        let changes = try FileChanges(path: stderrPath)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let found = lastLogLine(containing: text) { return found }
            guard changes.wait(until: deadline) else {
                throw TestFailure("timed out after \(timeout)s waiting until kvod logs \"\(text)\"")
            }
        }
    }

    /// The last line of kvod's log that contains `text`, if any.
    public func lastLogLine(containing text: String) -> String? {
        stderrText().split(separator: "\n").last { $0.contains(text) }.map(String.init)
    }

    deinit {
        ChildExit.kill(process)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
