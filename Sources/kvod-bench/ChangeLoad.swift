#if canImport(Glibc)
import Glibc
#endif

/// Which key each set goes to.
enum KeyChoice: Sendable {
    /// Setter connection c always sets key c.
    case perConnection
    /// Uniformly random keys out of `count`, from a fixed seed (so both peers get the same sequence).
    case random(count: Int, seed: UInt64)
}

/// Setters change keys while observers count the events: the one engine
/// behind set-throughput, fanout and many-keys.
///
/// Setters run on one thread, observers on another, and the main thread
/// keeps time. Unpaced, each setter connection keeps `pipeline` sets
/// unanswered and the setters stop while more than `maxLagEvents` events are
/// on their way to observers (so a server cannot win by piling output up in
/// its buffers). Paced, sets leave at `rate` per second, open loop.
struct ChangeLoad {
    var setters: [Connection]
    var observers: [Connection]
    /// Per key: the request bytes up to the payload.
    var prefixes: [[UInt8]]
    /// Per key: how many observers observe it.
    var fanout: [Int]
    var choice: KeyChoice
    var pipeline: Int
    var maxLagEvents: Int
    /// Sets per second across all setters, or nil for as fast as the server takes them.
    var rate: Double?
    var warmupSeconds: Double
    var durationSeconds: Double
    /// A client that pings throughout, on a thread of its own; nil: none.
    var bystander: Bystander? = nil

    struct Outcome {
        var setsPerSecond: Double
        var eventsPerSecond: Double
        var latencies: Histogram
        /// The bystander's ping times, when there was one.
        var pings: Histogram?
        var lost: Int
        var outOfOrder: Int
        var problem: String?
    }

    func run() -> Outcome {
        let signals = LoadSignals()
        let setter = Handoff(value: SetterWorker(load: self))
        let observer = Handoff(value: ObserverWorker(connections: observers))
        var bodies: [@Sendable () -> Void] = [
            { observer.value.run(signals) },
            { setter.value.run(signals) },
        ]
        if let bystander {
            let handoff = Handoff(value: bystander)
            bodies.append { handoff.value.run(signals) }
        }
        let threads = ThreadGroup(bodies)
        sleep(seconds: warmupSeconds)
        signals.recording.store(true, ordering: .releasing)
        let started = monotonicNanoseconds()
        let acknowledged0 = signals.acknowledgedSets.load(ordering: .acquiring)
        let delivered0 = signals.deliveredEvents.load(ordering: .acquiring)
        sleep(seconds: durationSeconds)
        let acknowledged1 = signals.acknowledgedSets.load(ordering: .acquiring)
        let delivered1 = signals.deliveredEvents.load(ordering: .acquiring)
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        signals.recording.store(false, ordering: .releasing)
        signals.stopSetting.store(true, ordering: .releasing)
        // Whatever is still on its way gets 20 s to arrive before it counts as lost.
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while !signals.settersFinished.load(ordering: .acquiring)
            || signals.deliveredEvents.load(ordering: .acquiring) < signals.expectedEvents.load(ordering: .acquiring) {
            if monotonicNanoseconds() > deadline { break }
            usleep(2_000)
        }
        signals.abandon.store(true, ordering: .releasing)
        threads.join()
        let expected = signals.expectedEvents.load(ordering: .acquiring)
        let delivered = signals.deliveredEvents.load(ordering: .acquiring)
        let problem = setter.value.problem ?? observer.value.problem ?? bystander?.problem
            ?? (signals.settersFinished.load(ordering: .acquiring) ? nil : "sets still unanswered after 20 s")
        return Outcome(
            setsPerSecond: Double(acknowledged1 - acknowledged0) / elapsed,
            eventsPerSecond: Double(delivered1 - delivered0) / elapsed,
            latencies: observer.value.latencies,
            pings: bystander?.latencies,
            lost: max(expected - delivered, 0) + max(delivered - expected, 0),
            outOfOrder: observers.reduce(0) { $0 + $1.outOfOrder },
            problem: problem)
    }
}

/// The setters' thread.
private final class SetterWorker {
    let load: ChangeLoad
    let poller = Poller()
    var problem: String?

    init(load: ChangeLoad) {
        self.load = load
        for connection in load.setters { poller.add(connection) }
    }

    func run(_ signals: LoadSignals) {
        let setters = load.setters
        let wire = setters[0].wire
        var random = SplitMix64(seed: 0)
        if case .random(_, let seed) = load.choice { random = SplitMix64(seed: seed) }
        var batch: [UInt8] = []
        batch.reserveCapacity(load.pipeline * 128)
        var expected = 0
        var totalSent = 0
        let started = monotonicNanoseconds()
        let interval = load.rate.map { 1e9 / $0 }
        while !signals.stopSetting.load(ordering: .relaxed) {
            let now = monotonicNanoseconds()
            let delivered = signals.deliveredEvents.load(ordering: .relaxed)
            var blockedOnLag = false
            for (position, connection) in setters.enumerated() {
                var room = load.pipeline - (connection.sent - connection.replies)
                if let interval {
                    room = min(room, Int(Double(now - started) / interval) + 1 - totalSent)
                }
                batch.removeAll(keepingCapacity: true)
                while room > 0 {
                    if expected - delivered >= load.maxLagEvents {
                        blockedOnLag = true
                        break
                    }
                    let key: Int
                    switch load.choice {
                    case .perConnection: key = position
                    case .random(let count, _): key = Int(random.next() % UInt64(count))
                    }
                    wire.appendChange(prefix: load.prefixes[key], index: connection.sent, sentAt: now, into: &batch)
                    connection.sent += 1
                    totalSent += 1
                    expected += load.fanout[key]
                    room -= 1
                }
                if !batch.isEmpty {
                    connection.send(batch)
                    poller.updateInterest(connection)
                }
            }
            signals.expectedEvents.store(expected, ordering: .releasing)
            if let interval {
                poller.poll(timeoutMilliseconds: 0)
                var next = timespec()
                let due = started + UInt64(Double(totalSent) * interval)
                next.tv_sec = Int(due / 1_000_000_000)
                next.tv_nsec = Int(due % 1_000_000_000)
                if due > monotonicNanoseconds() { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) }
            } else {
                poller.poll(timeoutMilliseconds: blockedOnLag ? 1 : 5)
            }
            signals.acknowledgedSets.store(setters.reduce(0) { $0 + $1.replies }, ordering: .releasing)
            if let broken = setters.lazy.compactMap(\.problem).first {
                problem = "setter: \(broken)"
                break
            }
        }
        // Collect every reply, so the expected event count is final.
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while problem == nil, setters.contains(where: { $0.replies < $0.sent }) {
            poller.poll(timeoutMilliseconds: 5)
            if let broken = setters.lazy.compactMap(\.problem).first { problem = "setter: \(broken)" }
            if monotonicNanoseconds() > deadline || signals.abandon.load(ordering: .relaxed) { return }
        }
        signals.acknowledgedSets.store(setters.reduce(0) { $0 + $1.replies }, ordering: .releasing)
        signals.expectedEvents.store(expected, ordering: .releasing)
        if problem == nil { signals.settersFinished.store(true, ordering: .releasing) }
    }
}

/// The observers' thread.
private final class ObserverWorker {
    let connections: [Connection]
    let poller = Poller()
    let latencies = Histogram()
    var problem: String?

    init(connections: [Connection]) {
        self.connections = connections
        for connection in connections { poller.add(connection) }
    }

    func run(_ signals: LoadSignals) {
        var counted = 0
        var recording = false
        while !signals.abandon.load(ordering: .relaxed) {
            poller.poll(timeoutMilliseconds: 2)
            var total = 0
            for connection in connections { total += connection.events }
            if total != counted {
                signals.deliveredEvents.add(total - counted, ordering: .releasing)
                counted = total
            }
            let shouldRecord = signals.recording.load(ordering: .relaxed)
            if shouldRecord != recording {
                recording = shouldRecord
                for connection in connections { connection.latencies = recording ? latencies : nil }
            }
            if let broken = connections.lazy.compactMap(\.problem).first {
                problem = "observer: \(broken)"
                return
            }
            if signals.settersFinished.load(ordering: .acquiring),
               counted >= signals.expectedEvents.load(ordering: .acquiring) {
                return
            }
        }
    }
}

/// A small, fast, seeded random generator (SplitMix64): the same key
/// sequence for kvod and Redis.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
