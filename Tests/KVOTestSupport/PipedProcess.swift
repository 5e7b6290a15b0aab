import Foundation
import Glibc

/// A helper program spoken to line by line: lines go to its stdin, lines
/// come from its stdout with deadlines. Its stderr is discarded. Blocking;
/// for synchronous tests.
public final class PipedProcess {
    public let process = ChildProcess()
    private let input = Pipe()
    private let output = Pipe()
    private var reader: LineReader

    /// Starts `executable` with ``KVODProcess/inheritedEnvironment``.
    public init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = KVODProcess.inheritedEnvironment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if ChildExit.status(of: process) == nil { process.terminate() }
        if (try? ChildExit.wait(for: process)) == nil { ChildExit.kill(process) }
    }

    public var pid: Int32 { process.processIdentifier }

    /// Writes `line` and a newline to the program's stdin.
    public func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The program's next line. Throws ``EndOfStream`` when it closed its
    /// stdout (exited), and a failure naming `what` after `timeout` seconds.
    @available(*, noasync, message: "blocks a cooperative thread")
    public func readLine(timeout: Double, what: @autoclosure () -> String = "a line") throws -> String {
        try reader.readLine(timeout: timeout, what: what())
    }

    /// Closes the program's stdin (its end of input).
    public func closeInput() throws { try input.fileHandleForWriting.close() }
}
