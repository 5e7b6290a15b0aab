import Foundation
import KVOTestSupport

/// Thousands of observing clients held by the `kvod-crowd` helper process
/// (Tests/Tools/kvod-crowd), so that this process keeps few descriptors.
final class Crowd {
    private let helper: PipedProcess

    /// Connects `count` clients, the i-th observing `crowd` key path
    /// `k<i % keys>`, and waits until every observation is registered.
    init(socketPath: String, count: Int, keys: Int, timeout: Double = 60) throws {
        helper = try PipedProcess(KVODProcess.productsDirectory.appendingPathComponent("kvod-crowd"),
                                  [socketPath, String(count), String(keys)])
        let answer = try readLine(timeout: timeout)
        guard answer == "ready" else { throw TestFailure("kvod-crowd: \(answer)") }
    }

    /// Has every client read `events` events, each for its own key.
    func expectEvents(_ events: Int, timeout: Double = 60) throws {
        try helper.send("expect \(events)")
        let answer = try readLine(timeout: timeout)
        guard answer == "ok" else { throw TestFailure("kvod-crowd: \(answer)") }
    }

    /// Closes every client and waits for the helper to exit.
    func disperse() throws {
        try helper.closeInput()
        try waitUntil("kvod-crowd exits", timeout: 30) { ChildExit.status(of: helper.process) != nil }
    }

    private func readLine(timeout: Double) throws -> String {
        do {
            return try helper.readLine(timeout: timeout, what: "answer from kvod-crowd")
        } catch is EndOfStream {
            throw TestFailure("kvod-crowd exited: status \(helper.process.terminationStatus)")
        }
    }
}
