import Foundation
import Glibc
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// After writing one change to many observers kvod pauses a moment
/// (`--fanout-pause-microseconds`), so that the changes arriving meanwhile
/// reach each observer in one write.
@Suite struct FanOutPacingTests {
    static let observerCount = 16
    static let changes = 40

    @Test func changesArrivingDuringThePauseReachEachObserverTogether() throws {
        // 10 ms: long beside the 1 ms between sets, so several sets arrive
        // during each pause even on a loaded machine.
        let kvod = try KVODProcess(arguments: ["--fanout-pause-microseconds", "10000"])
        let observers = try (0..<Self.observerCount).map { _ in try LineClient(path: kvod.socketPath) }
        for observer in observers {
            #expect(try observer.request(#"{"op":"observe","object":"dial","keyPath":"v","options":["new"]}"#).reply["ok"] == true)
        }
        // Observer 0 is read as the changes come, on a thread of its own.
        let watched = observers[0].fd
        let result = Recorder<Result<[[Int]], any Error>>()
        let reader = Thread { result.append(Result { try Self.readEvents(from: watched, count: Self.changes) }) }
        reader.start()
        let setter = try LineClient(path: kvod.socketPath)
        // Each set in a write of its own, the next once the last one's reply
        // is back or 1 ms passed: flushed as they come, each would reach the
        // observers alone; held back by a pause, several arrive during it.
        var replies = 0
        for value in 0..<Self.changes {
            try setter.send(#"{"op":"set","object":"dial","keyPath":"v","value":\#(value)}"#)
            while replies <= value, let reply = try? setter.readJSON(timeout: 0.001) {
                #expect(reply["ok"] == true)
                replies += 1
            }
        }
        while replies < Self.changes {
            #expect(try setter.readJSON()["ok"] == true)
            replies += 1
        }
        try waitUntil("the reader thread finishes", timeout: 15) { result.count > 0 }
        let reads = try result.values[0].get()
        print("fan-out pacing: events per read \(reads.map(\.count))")
        #expect(reads.flatMap { $0 } == Array(0..<Self.changes), "every change, in order")
        #expect(reads.map(\.count).max() ?? 0 >= 3,
                "some write should carry several changes; events per read: \(reads.map(\.count))")
        for observer in observers.dropFirst() {
            for value in 0..<Self.changes { #expect(try observer.readJSON()["new"]?.intValue == value) }
        }
    }

    @Test func aPauseLongerThanTenMillisecondsIsRefused() throws {
        let run = try CommandRun.run(KVODProcess.binaryURL, ["--socket", "/nonexistent/kvod.sock",
                                                              "--fanout-pause-microseconds", "10001"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--fanout-pause-microseconds must be 0 to 10000"), "\(run.stderr)")
    }

    /// The `new` values of `count` events read straight from the socket,
    /// grouped by the `read` that returned them (a read ending inside a line
    /// counts that line with the read that completes it).
    static func readEvents(from fd: Int32, count: Int, timeout: Double = 10) throws -> [[Int]] {
        let deadline = Date().addingTimeInterval(timeout)
        var reads: [[Int]] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while reads.reduce(0, { $0 + $1.count }) < count {
            guard Date() < deadline else { throw TestFailure("events still missing after \(timeout) s: \(reads)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { throw TestFailure("connection ended after \(reads)") }
            pending += buffer[..<got]
            var values: [Int] = []
            while let newline = pending.firstIndex(of: 10) {
                let event = try JSONReader.parse(Array(pending[..<newline]))
                pending.removeSubrange(...newline)
                values.append(event["new"]?.intValue ?? -1)
            }
            if !values.isEmpty { reads.append(values) }
        }
        return reads
    }
}

