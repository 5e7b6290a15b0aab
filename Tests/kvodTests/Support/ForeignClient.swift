import Foundation
import KVOEngine
#if canImport(Glibc)
import Glibc
#endif

/// A client run as another user: `setpriv` drops to that user and group (with
/// only the supplementary groups given), then `socat` connects to kvod. Lines go through
/// socat's stdin and stdout. Needs root, as the tests' CI runs.
final class ForeignClient {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    /// Whether this process may switch users (it is root).
    static var canSwitchUsers: Bool { getuid() == 0 }

    init(socketPath: String, user: String, group: String, supplementaryGroups: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        let groups = supplementaryGroups.isEmpty ? "--clear-groups" : "--groups=" + supplementaryGroups.joined(separator: ",")
        process.arguments = ["--reuid=\(user)", "--regid=\(group)", groups,
                             "socat", "-", "UNIX-CONNECT:\(socketPath)"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    var pid: Int32 { process.processIdentifier }

    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The next line socat printed, as JSON, or a failure after `timeout` seconds.
    func readJSON(timeout: Double = 10) throws -> JSONValue {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return try JSONReader.parse(line)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line from the foreign client within \(timeout)s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { throw EndOfStream() }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Sends a request and returns its reply (the client observes nothing that
    /// could interleave, or the caller reads events itself).
    func request(_ line: String) throws -> JSONValue {
        try send(line)
        return try readJSON()
    }

    /// Every line up to the reply to a `ping`: what kvod had sent this client
    /// before it answered the ping (events included), in order.
    func linesBeforePing() throws -> [JSONValue] {
        try send(#"{"op":"ping","id":"fence"}"#)
        var lines: [JSONValue] = []
        while true {
            let line = try readJSON()
            if line["id"] == "fence" { return lines }
            lines.append(line)
        }
    }
}
