import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that stop reading: kvod's memory stays bounded, the others lose
/// nothing and are not slowed down, and the stuck one learns what it missed.
@Suite(.serialized, .onDedicatedThread) struct SlowConsumerTests {
    /// Small limits, so that a stuck client reaches them within the test.
    static let limits = ["--output-hard-limit", "1m", "--output-soft-limit", "256k", "--output-soft-seconds", "1"]

    @Test func stuckClientCostsBoundedMemoryAndNeitherDataNorLatencyOfOthers() throws {
        // Two kvods driven in turns by one loop, window by window: one without
        // and one with the stuck client. Both see the same machine at the same
        // moments (other tests run in parallel), so their p99s compare fairly.
        let alone = try FanOutRig(stuckPolicy: nil)
        let withStuck = try FanOutRig(stuckPolicy: .coalesce)
        let deadline = Date().addingTimeInterval(300)
        var turn = 0
        while !alone.isDone || !withStuck.isDone {
            // Alternate who goes first, so neither is always served second.
            turn += 1
            for rig in turn % 2 == 0 ? [alone, withStuck] : [withStuck, alone] { try rig.step() }
            if Date() > deadline { throw TestFailure("fan-out runs stuck: \(alone.progress), \(withStuck.progress)") }
        }
        let p99Alone = quantile(alone.latencies, 0.99)
        let p99Stuck = quantile(withStuck.latencies, 0.99)
        let peakAlone = try alone.peakResidentBytes()
        let peakStuck = try withStuck.peakResidentBytes()
        print("""
            stuck client: \(FanOutRig.setCount) sets to 100 observers; p99 \(p99Alone) ns alone, \(p99Stuck) ns with \
            the stuck client (ratio \(Double(p99Stuck) / Double(max(p99Alone, 1)))); median \
            \(quantile(alone.latencies, 0.5)) / \(quantile(withStuck.latencies, 0.5)) ns; peak RSS \(peakAlone) alone, \
            \(peakStuck) with the stuck client, which would have been sent \(withStuck.eventBytes) bytes
            """)
        // Without limits kvod would queue every event for the stuck client
        // (about 28 MB here); with a 1 MiB hard limit it queues at most that.
        if TestEnvironment.residentMemoryIsMeaningful {
            #expect(peakStuck - peakAlone < 8 << 20, "peak RSS \(peakStuck) with the stuck client vs \(peakAlone) without")
            #expect(peakStuck < 64 << 20)
        }
        #expect(p99Stuck <= 2 * p99Alone, "p99 \(p99Stuck) ns with the stuck client vs \(p99Alone) ns without")
        try withStuck.expectStuckClientWasHeldBack()
    }

    @Test func stuckClientWithLargeValuesKeepsKvodsMemoryWithinTheHistoryAndOutputBounds() throws {
        // 1 MB values set again and again while a client observes them and
        // never reads: what kvod holds is the history's bytes, the live value
        // and the stuck client's output, whatever the number of sets.
        let historyBytes = 16 << 20
        let maxLineBytes = 2 << 20
        let kvod = try KVODProcess(arguments: Self.limits + ["--history-bytes", "16m", "--max-line-bytes", String(maxLineBytes)])
        let stuck = try LineClient(path: kvod.socketPath)
        _ = try stuck.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new","old"]}"#)
        let setter = try LineClient(path: kvod.socketPath)
        let valueBytes = 1 << 20
        let sets = TestEnvironment.scaled(120, dividedUnderSanitizerBy: 5)
        let baseline = try ProcessStats(pid: kvod.pid).residentBytes()
        var largest = baseline
        for index in 0..<sets {
            // Each value differs, so none is shared with the one before.
            let digits = String(index)
            let value = digits + String(repeating: "v", count: valueBytes - digits.count)
            #expect(try setter.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(value)"}"#).reply["ok"] == true)
            largest = max(largest, try ProcessStats(pid: kvod.pid).residentBytes())
        }
        let peak = try ProcessStats(pid: kvod.pid).peakResidentBytes()
        let info = try setter.request(#"{"op":"info"}"#).reply
        // History + the live value + the stuck client's output (hard limit, one
        // held event of old and new) + one request line + 64 MiB for the rest.
        let bound = historyBytes + valueBytes + ((1 << 20) + 2 * valueBytes) + maxLineBytes + (64 << 20)
        print("""
            stuck client, \(sets) sets of 1 MiB: kvod RSS \(baseline) at start, largest sample \(largest), peak \(peak); \
            bound \(bound); history \(info["memory"]?["history"]?.intValue ?? -1) bytes in \(info["historyChanges"]?.intValue ?? -1) changes
            """)
        #expect((info["memory"]?["history"]?.intValue ?? .max) <= historyBytes)
        if TestEnvironment.residentMemoryIsMeaningful {
            #expect(peak < bound, "peak RSS \(peak), bound \(bound)")
        }
        _ = try kvod.waitForLog(containing: "is not keeping up")
        withExtendedLifetime(stuck) {}
    }

    @Test func coalescedEventsCountWhatWasFoldedAndEndAtTheLatestValue() throws {
        let kvod = try KVODProcess(arguments: Self.limits)
        let stuck = try LineClient(path: kvod.socketPath)
        let keys = (0..<10).map { "k\($0)" }
        let keyList = keys.map { "\"\($0)\"" }.joined(separator: ",")
        _ = try stuck.request(#"{"op":"observe","object":"o","keyPaths":[\#(keyList)],"options":["new"]}"#)
        let rounds = 2_000
        let setter = try floodPaddedSets(kvod, keys: keys, rounds: rounds)
        defer { withExtendedLifetime(setter) {} }
        // Reading now drains kvod's queue; then the held events come.
        var delivered: [String: Int] = [:]
        var folded: [String: Int] = [:]
        var latest: [String: Int] = [:]
        var sawCoalesced = false
        while delivered.values.reduce(0, +) + folded.values.reduce(0, +) < rounds * keys.count {
            let event = try stuck.readJSON()
            guard let key = event["keyPath"]?.stringValue, let n = event["new"]?["n"]?.intValue else {
                Issue.record("not a change event: \(event)")
                return
            }
            #expect(n > latest[key, default: -1], "events of one key come in order")
            latest[key] = n
            delivered[key, default: 0] += 1
            if let count = event["coalesced"]?.intValue {
                sawCoalesced = true
                folded[key, default: 0] += count
            }
        }
        #expect(sawCoalesced)
        for (offset, key) in keys.enumerated() {
            // Every change is accounted for, and the last event is the last change.
            #expect(delivered[key, default: 0] + folded[key, default: 0] == rounds)
            #expect(latest[key] == (rounds - 1) * keys.count + offset)
        }
        #expect(try stuck.request(#"{"op":"ping","id":"after"}"#).reply["id"] == "after")
    }

    @Test func stuckClientWithDisconnectPolicyIsClosedWithALogLineNamingIt() throws {
        let kvod = try KVODProcess(arguments: Self.limits)
        let stuck = try LineClient(path: kvod.socketPath)
        _ = try stuck.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"policy":"disconnect"}"#)
        let observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        let setter = try LineClient(path: kvod.socketPath)
        let sets = 20_000
        let batch = 500
        let padding = String(repeating: "y", count: 200)
        for start in stride(from: 0, to: sets, by: batch) {
            try setter.pipeline(count: batch) {
                #"{"op":"set","object":"o","keyPath":"k","value":{"n":\#(start + $0),"pad":"\#(padding)"}}"#
            }
            // The other observer reads as it goes, and loses nothing.
            for n in start..<(start + batch) {
                let event = try observer.readJSON()
                if event["new"]?["n"]?.intValue != n || event["coalesced"] != nil {
                    Issue.record("observer expected n=\(n), got \(event)")
                    return
                }
            }
        }
        let line = try kvod.waitForLog(containing: "disconnected: output over its limit")
        #expect(line.contains("pid=\(getpid()) uid=\(getuid())"), "\(line)")
        #expect(line.contains("policy disconnect"))
        #expect(try stuck.waitForEndOfStream(timeout: 10))
        let info = try setter.request(#"{"op":"info"}"#).reply
        #expect(info["connections"] == 2)
        #expect(info["observations"] == 1)
    }

    @Test func softLimitHeldLongerThanItsPeriodCongestsTheClient() throws {
        // A hard limit far away: only the soft one can trigger.
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "256m", "--output-soft-limit", "64k",
                                               "--output-soft-seconds", "0.5"])
        let stuck = try LineClient(path: kvod.socketPath)
        _ = try stuck.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        let setter = try LineClient(path: kvod.socketPath)
        let padding = String(repeating: "z", count: 1000)
        let log = try FileChanges(path: kvod.stderrPath)
        let started = Date()
        var sets = 0
        // Keeps kvod's queue for the stuck client over 64 KiB for more than
        // 0.5 s: a hundred sets each time kvod writes to its log or 20 ms
        // pass, whichever comes first (the soft period is a time).
        while kvod.lastLogLine(containing: "is not keeping up") == nil {
            try setter.pipeline(count: 100) { #"{"op":"set","object":"o","keyPath":"k","value":{"n":\#(sets + $0),"pad":"\#(padding)"}}"# }
            sets += 100
            #expect(Date().timeIntervalSince(started) < 20, "never congested")
            if Date().timeIntervalSince(started) >= 20 { return }
            _ = log.wait(until: Date().addingTimeInterval(0.02))
        }
        #expect(Date().timeIntervalSince(started) >= 0.5)
        try setter.pipeline(count: 100) { #"{"op":"set","object":"o","keyPath":"k","value":{"n":\#(sets + $0),"pad":"\#(padding)"}}"# }
        sets += 100
        var last = -1
        var foldedTotal = 0
        while last != sets - 1 {
            let event = try stuck.readJSON()
            last = event["new"]?["n"]?.intValue ?? -2
            foldedTotal += event["coalesced"]?.intValue ?? 0
        }
        #expect(foldedTotal > 0)
    }

    @Test func clientThatNeverReadsRepliesIsThrottledAndGetsEveryReplyLater() throws {
        // At debug level kvod logs when it stops reading a client.
        let kvod = try KVODProcess(arguments: Self.limits + ["--log-level", "debug"])
        let client = try LineClient(path: kvod.socketPath)
        let document = String(repeating: "d", count: 10_000)
        _ = try client.request(#"{"op":"set","object":"big","keyPath":"v","value":"\#(document)"}"#)
        let baseline = try ProcessStats(pid: kvod.pid).residentBytes()
        // Sends gets (10 KB of reply each) without reading, until kvod stops
        // reading this client and the socket pushes back.
        let request = Array(#"{"op":"get","object":"big","keyPath":"v"}"#.utf8) + [10]
        var sent = 0
        var lastProgress = Date()
        // Pushed back: the socket stayed full for a second (the kernel says
        // when it can take more, so the wait ends as soon as kvod reads).
        while Date().timeIntervalSince(lastProgress) < 1 {
            if try client.sendWithoutBlocking(request) {
                sent += 1
                lastProgress = Date()
            } else {
                _ = client.waitUntilWritable(timeout: 1 - Date().timeIntervalSince(lastProgress))
            }
            #expect(sent < 200_000, "kvod never pushed back")
            if sent >= 200_000 { return }
        }
        let peak = try ProcessStats(pid: kvod.pid).peakResidentBytes()
        print("throttled client: \(sent) requests (\(sent * 10_000) bytes of replies) before kvod pushed back; RSS \(baseline) → peak \(peak)")
        #expect(sent * 10_000 > 1 << 20, "more replies asked for than the hard limit")
        let paused = try kvod.waitForLog(containing: "not read from")
        #expect(paused.contains("pid=\(getpid())"))
        if TestEnvironment.residentMemoryIsMeaningful { #expect(peak - baseline < 16 << 20) }
        for index in 0..<sent {
            // kvod reads again once we have read; then the rest of a half-sent line can go.
            if index == sent - 1 { try client.finishUnsent() }
            let reply = try client.readJSON()
            #expect(reply["ok"] == true && reply["value"]?.stringValue?.count == 10_000, "reply \(index)")
            if reply["ok"] != true { break }
        }
        #expect(try client.request(#"{"op":"ping","id":"last"}"#).reply["id"] == "last")
    }
}

/// The fan-out load on one kvod: 100 observers of one key each, a setter
/// doing 100,000 sets in windows of 100, round-robin over the 100 keys, and
/// optionally a client that observes all 100 keys as they do and never reads. Driven step by step, so that two rigs can run
/// in turns.
final class FanOutRig {
    static let observerCount = 100
    static let setCount = TestEnvironment.scaled(100_000, dividedUnderSanitizerBy: 10)
    static let window = 100

    let kvod: KVODProcess
    private let observers: [LineClient]
    private let setter: LineClient
    private let stuck: LineClient?
    private let fanIn: SocketFanIn
    private let padding = String(repeating: "p", count: 150)
    private var sent = 0
    private var replies = 0
    private var received = 0
    private var nextN = Array(0..<FanOutRig.observerCount)
    /// Set-to-event latency of every event the observers got, in nanoseconds.
    private(set) var latencies: [Int] = []
    /// What the observers received, in bytes.
    private(set) var eventBytes = 0

    init(stuckPolicy: ObservationPolicy?) throws {
        // A short change history: the 100,000 sets would otherwise keep tens of
        // MB of history (for `observe` with `since`) in both kvods, which is
        // not what this test measures.
        let kvod = try KVODProcess(arguments: SlowConsumerTests.limits + ["--history", "1000"])
        self.kvod = kvod
        let keys = (0..<Self.observerCount).map { "k\($0)" }
        observers = try keys.map { key in
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"observe","object":"bench","keyPath":"\#(key)","options":["new"]}"#)
            return client
        }
        if let stuckPolicy {
            let client = try LineClient(path: kvod.socketPath)
            let keyList = keys.map { "\"\($0)\"" }.joined(separator: ",")
            _ = try client.request(#"{"op":"observe","object":"bench","keyPaths":[\#(keyList)],"options":["new"],"policy":"\#(stuckPolicy.rawValue)"}"#)
            stuck = client
        } else {
            stuck = nil
        }
        setter = try LineClient(path: kvod.socketPath)
        fanIn = SocketFanIn(fds: [setter.fd] + observers.map(\.fd))
        latencies.reserveCapacity(Self.setCount)
    }

    var isDone: Bool { replies == Self.setCount && received == Self.setCount }
    var progress: String { "\(replies) replies, \(received) events" }

    /// Sends the next window once the last one is answered, and takes what
    /// has arrived, waiting at most a millisecond.
    func step() throws {
        if replies == sent, sent < Self.setCount {
            let now = monotonicNanoseconds()
            var burst = ""
            for n in sent..<(sent + Self.window) {
                burst += #"{"op":"set","object":"bench","keyPath":"k\#(n % Self.observerCount)","value":{"n":\#(n),"t":\#(now),"pad":"\#(padding)"}}"# + "\n"
            }
            try setter.write(Array(burst.utf8))
            sent += Self.window
        }
        try fanIn.pump(timeoutMilliseconds: 1) { index, line in
            if index == 0 {
                replies += 1
                return
            }
            let observer = index - 1
            let n = integerField("n", in: line)
            if n != nextN[observer] {
                Issue.record("observer \(observer) got n=\(n ?? -1), expected \(nextN[observer]): it lost events")
            }
            nextN[observer] = (n ?? nextN[observer]) + Self.observerCount
            if let sentAt = integerField("t", in: line) { latencies.append(monotonicNanoseconds() - sentAt) }
            eventBytes += line.count + 1
            received += 1
        }
    }

    func peakResidentBytes() throws -> Int { try ProcessStats(pid: kvod.pid).peakResidentBytes() }

    /// The stuck client was congested (kvod says so, naming it) and is still
    /// connected, as its policy (coalesce) wants.
    func expectStuckClientWasHeldBack() throws {
        guard let stuck else { return }
        let line = try kvod.waitForLog(containing: "is not keeping up")
        #expect(line.contains("pid=\(getpid())"))
        let info = try setter.request(#"{"op":"info"}"#).reply
        #expect(info["connections"]?.intValue == Self.observerCount + 2)
        withExtendedLifetime(stuck) {}
    }
}

func median(_ values: [Int]) -> Int {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
