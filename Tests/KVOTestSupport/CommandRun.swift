import Foundation
import Glibc

/// A command-line program run to completion, with its output and exit status.
public struct CommandRun: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Runs `executable` with `arguments`, feeding it `stdin`; kills it and
    /// fails when it has not exited within `timeout` seconds.
    @available(*, noasync, message: "blocks a cooperative thread; use try await CommandRun.run(…)")
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                           stdin: String? = nil, timeout: Double = 20) throws -> CommandRun {
        try RunningCommand(executable, arguments, environment: environment, stdin: stdin).wait(timeout: timeout)
    }

    /// Runs `executable` as the synchronous form does, suspending while it waits.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                           stdin: String? = nil, timeout: Double = 20) async throws -> CommandRun {
        try await RunningCommand(executable, arguments, environment: environment, stdin: stdin).wait(timeout: timeout)
    }

    /// stdout's non-empty lines.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A program started in the background; ``wait(timeout:)`` collects it.
///
/// @unchecked Sendable: the drains are set once, in `init`; the rest is
/// immutable or locked (``Collected``, ``Recorder``).
public final class RunningCommand: @unchecked Sendable {
    private let process: ChildProcess
    private let description: String
    private let output = Collected()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private var stdoutDrain: PipeDrain?
    private var stderrDrain: PipeDrain?
    /// How often a wait for the exit looks at the kernel's record (``ChildExit``):
    /// nothing else tells a waiter that a child has exited.
    private static let lateExitRecheck = 0.05

    /// Starts `executable` with ``KVODProcess/inheritedEnvironment`` (so without
    /// `$KVOD_SOCKET`) plus `environment`.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                stdin: String? = nil) throws {
        process = ChildProcess()
        description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        process.environment = KVODProcess.inheritedEnvironment.merging(environment) { _, new in new }
        let input = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        // Drain both pipes as the program writes, so it cannot block on a full pipe.
        stdoutDrain = PipeDrain(stdoutPipe.fileHandleForReading) { [output] data in output.withLock { $0.out.append(data) } }
        stderrDrain = PipeDrain(stderrPipe.fileHandleForReading) { [output] data in output.withLock { $0.err.append(data) } }
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
    }

    /// Waits for the exit; kills the program and fails after `timeout` seconds.
    @available(*, noasync, message: "blocks a cooperative thread; use try await wait(…)")
    public func wait(timeout: Double = 20) throws -> CommandRun {
        var status: Int32?
        do {
            try waitUntil("\(description) exits", timeout: timeout, recheckEvery: Self.lateExitRecheck) {
                status = ChildExit.status(of: process)
                return status != nil
            }
        } catch {
            throw killAndReap(after: error)
        }
        return collect(status: status ?? -1)
    }

    /// Waits for the exit as the synchronous form does, suspending meanwhile.
    public func wait(timeout: Double = 20) async throws -> CommandRun {
        var status: Int32?
        do {
            try await waitUntil("\(description) exits", timeout: timeout,
                                recheckEvery: Self.lateExitRecheck) { () async -> Bool in
                status = ChildExit.status(of: process)
                return status != nil
            }
        } catch {
            throw killAndReap(after: error)
        }
        return collect(status: status ?? -1)
    }

    /// The program's process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether the program is still running.
    public var isRunning: Bool { ChildExit.status(of: process) == nil }

    /// What the program has written to standard output so far, in whole lines.
    public var linesSoFar: [String] {
        let text = output.withLock { String(decoding: $0.out, as: UTF8.self) }
        return text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1)
            .map(String.init)
    }

    /// Sends `signal` to the program.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Everything the program wrote, once it has exited.
    private func collect(status: Int32) -> CommandRun {
        // The pipes end as the program exits (no child of its own keeps them).
        stdoutDrain?.waitForEnd(timeout: 10)
        stderrDrain?.waitForEnd(timeout: 10)
        let (out, err) = output.withLock { ($0.out, $0.err) }
        return CommandRun(status: status, stdout: String(decoding: out, as: UTF8.self),
                          stderr: String(decoding: err, as: UTF8.self))
    }

    /// SIGKILL, then the exit status is collected (at once: SIGKILL cannot be
    /// caught); returns `error` with what the program was doing.
    private func killAndReap(after error: any Error) -> any Error {
        let state = ChildExit.describe(process.processIdentifier)
        killAndReap()
        return TestFailure("\(error) (\(state))")
    }

    private func killAndReap() {
        ChildExit.kill(process)
    }

    deinit {
        killAndReap()
    }
}

/// What the program wrote so far, filled by its pipes' ``PipeDrain`` threads.
///
/// @unchecked Sendable: `data` is only touched with `lock` held.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = (out: Data(), err: Data())

    func withLock<T>(_ body: (inout (out: Data, err: Data)) -> T) -> T {
        lock.withLock { body(&data) }
    }
}
