import Foundation
import Glibc

/// A command-line program run to completion, with its output and exit status.
public struct CommandRun: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Runs `executable` with `arguments`, feeding it `stdin`; kills it and
    /// fails when it has not exited within `timeout` seconds.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                           stdin: String? = nil, timeout: Double = 20) throws -> CommandRun {
        try RunningCommand(executable, arguments, environment: environment, stdin: stdin).wait(timeout: timeout)
    }

    /// stdout's non-empty lines.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A program started in the background; ``wait(timeout:)`` collects it.
public final class RunningCommand: Sendable {
    private let process: Process
    private let description: String
    private let output = Collected()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()

    /// Starts `executable`; `$KVOD_SOCKET` is removed from its environment unless `environment` sets it.
    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                stdin: String? = nil) throws {
        process = Process()
        description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "KVOD_SOCKET")
        env.merge(environment) { _, new in new }
        process.environment = env
        let input = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        // Drain both pipes as the program writes, so it cannot block on a full pipe.
        stdoutPipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLock { $0.out.append(data) }
        }
        stderrPipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLock { $0.err.append(data) }
        }
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
    }

    /// Waits for the exit; kills the program and fails after `timeout` seconds.
    public func wait(timeout: Double = 20) throws -> CommandRun {
        do {
            try waitUntil("\(description) exits", timeout: timeout) { !process.isRunning }
        } catch {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw error
        }
        stdoutPipe.fileHandleForReading.readabilityHandler = nil
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        let restOut = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        let restErr = stderrPipe.fileHandleForReading.readDataToEndOfFile()
        let (out, err) = output.withLock { ($0.out + restOut, $0.err + restErr) }
        return CommandRun(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                          stderr: String(decoding: err, as: UTF8.self))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// What the program wrote so far, filled from Foundation's reading threads.
///
/// @unchecked Sendable: `data` is only touched with `lock` held.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = (out: Data(), err: Data())

    func withLock<T>(_ body: (inout (out: Data, err: Data)) -> T) -> T {
        lock.withLock { body(&data) }
    }
}
