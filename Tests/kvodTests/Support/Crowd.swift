import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Thousands of observing clients held by the `kvod-crowd` helper process
/// (Tests/Tools/kvod-crowd), so that this process keeps few descriptors.
final class Crowd {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    /// Connects `count` clients, the i-th observing `crowd` key path
    /// `k<i % keys>`, and waits until every observation is registered.
    init(socketPath: String, count: Int, keys: Int, timeout: Double = 60) throws {
        process.executableURL = KVODProcess.productsDirectory.appendingPathComponent("kvod-crowd")
        process.arguments = [socketPath, String(count), String(keys)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let answer = try readLine(timeout: timeout)
        guard answer == "ready" else { throw TestFailure("kvod-crowd: \(answer)") }
    }

    /// Has every client read `events` events, each for its own key.
    func expectEvents(_ events: Int, timeout: Double = 60) throws {
        try input.fileHandleForWriting.write(contentsOf: Data("expect \(events)\n".utf8))
        let answer = try readLine(timeout: timeout)
        guard answer == "ok" else { throw TestFailure("kvod-crowd: \(answer)") }
    }

    /// Closes every client and waits for the helper to exit.
    func disperse() throws {
        try input.fileHandleForWriting.close()
        try waitUntil("kvod-crowd exits", timeout: 30) { !process.isRunning }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    private func readLine(timeout: Double) throws -> String {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("kvod-crowd said nothing within \(timeout)s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { throw TestFailure("kvod-crowd exited: status \(process.terminationStatus)") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }
}
