import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Fan-out to observers that are KVOClient programs (issue 16): each a
/// process of `kvod-bench-observer`, observing one key path through
/// KVOClient, so the events/s include the decoding a Swift program gets.
/// kvod-bench's own setter sets the key (64 pipelined) and keeps at most
/// 256 × observers events on their way, counted from the observers' reports
/// (every 256th event, on their standard output). kvod only: Redis has no
/// KVOClient; its raw-observer fan-out of the same size is the row to compare with.
enum KVOClientFanout {
    /// Where `kvod-bench-observer` is: beside this executable.
    static var observerBinary: String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("kvod-bench-observer").path
    }

    /// One observer process and what it reported.
    private final class Observer {
        let process = Process()
        let output: FileHandle
        var unparsed: [UInt8] = []
        var ready = false
        var events = 0
        var lastIndex = -1
        var outOfOrder = 0
        var failure: String?

        init(socket: String, key: BenchKey) throws(BenchError) {
            let pipe = Pipe()
            output = pipe.fileHandleForReading
            process.executableURL = URL(fileURLWithPath: KVOClientFanout.observerBinary)
            process.arguments = [socket, key.object, key.keyPath]
            process.standardOutput = pipe
            process.standardError = FileHandle.standardError
            do {
                try process.run()
            } catch {
                throw BenchError("cannot start \(KVOClientFanout.observerBinary): \(error)")
            }
            UnixSocket.setNonBlocking(output.fileDescriptor)
        }

        /// Reads what the observer printed so far.
        func poll() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(output.fileDescriptor, $0.baseAddress, $0.count) }
                guard n > 0 else { return }
                unparsed.append(contentsOf: buffer[..<n])
                while let newline = unparsed.firstIndex(of: 10) {
                    let words = String(decoding: unparsed[..<newline], as: UTF8.self).split(separator: " ")
                    unparsed.removeSubrange(...newline)
                    switch words.first {
                    case "ready": ready = true
                    case "p" where words.count == 4:
                        lastIndex = Int(words[1]) ?? lastIndex
                        events = Int(words[2]) ?? events
                        outOfOrder = Int(words[3]) ?? outOfOrder
                    default: failure = failure ?? words.joined(separator: " ")
                    }
                }
            }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    static func run(_ server: ServerProcess, _ sizes: Sizes, observers count: Int) throws(BenchError) -> ScenarioResult {
        let row = "fanout, \(count) KVOClient observers of one key (processes)"
        guard server.peer == .kvod else { return ScenarioResult(figures: [], problems: []) }
        let wire = Wire(peer: .kvod, flavour: .pubSub)
        let key = BenchKey(object: "fan/0", keyPath: "v")
        let setter = try Connection(path: server.socketPath, wire: wire)
        var batch: [UInt8] = []
        wire.appendChange(prefix: wire.changePrefix(key), index: 0, sentAt: 0, into: &batch)
        setter.send(batch)
        setter.sent = 1
        var observers: [Observer] = []
        defer { for observer in observers { observer.stop() } }
        for _ in 0..<count { observers.append(try Observer(socket: server.socketPath, key: key)) }
        let readyBy = monotonicNanoseconds() + 60_000_000_000
        while !observers.allSatisfy(\.ready) {
            for observer in observers { observer.poll() }
            if let failed = observers.first(where: { $0.failure != nil }) { throw BenchError("observer: \(failed.failure!)") }
            guard monotonicNanoseconds() < readyBy else { throw BenchError("the KVOClient observers were not ready in 60 s") }
            usleep(1_000)
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { scratch.deallocate() }
        let start = monotonicNanoseconds()
        let windowStart = start + UInt64(sizes.warmupSeconds * 1e9)
        let end = windowStart + UInt64(sizes.durationSeconds * 1e9)
        var eventsAtWindowStart: Int?
        var now = start
        // The first set (index 0) came before the observers: they count from index 1.
        while now < end {
            for observer in observers { observer.poll() }
            while setter.readAvailable(scratch) {}
            let delivered = observers.reduce(0) { $0 + $1.events }
            let inFlight = (setter.sent - 1) * count - delivered
            let unanswered = setter.sent - setter.replies
            if inFlight < 256 * count, unanswered < sizes.fanoutPipeline, setter.flush() {
                batch.removeAll(keepingCapacity: true)
                for _ in unanswered..<sizes.fanoutPipeline {
                    wire.appendChange(prefix: wire.changePrefix(key), index: setter.sent, sentAt: now, into: &batch)
                    setter.sent += 1
                }
                setter.send(batch)
            } else {
                usleep(50)
            }
            if let problem = setter.problem { throw BenchError("setter: \(problem)") }
            now = monotonicNanoseconds()
            if eventsAtWindowStart == nil, now >= windowStart { eventsAtWindowStart = delivered }
        }
        for observer in observers { observer.poll() }
        let delivered = observers.reduce(0) { $0 + $1.events }
        let perSecond = Double(delivered - (eventsAtWindowStart ?? 0)) / sizes.durationSeconds
        var problems = observers.compactMap(\.failure)
        let outOfOrder = observers.reduce(0) { $0 + $1.outOfOrder }
        if outOfOrder > 0 { problems.append("\(outOfOrder) event(s) out of order") }
        return ScenarioResult(
            figures: [Figure(row: row, unit: "events/s", higherIsBetter: true, value: perSecond)], problems: problems)
    }
}
