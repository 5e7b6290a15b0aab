#if canImport(Glibc)
import Glibc
#endif

/// Which key each set goes to.
enum KeyChoice: Sendable {
    /// Setter connection c always sets key c.
    case perConnection
    /// Uniformly random keys out of `count`, from a fixed seed (so both peers get the same sequence).
    case random(count: Int, seed: UInt64)
    /// Setter connection c sets keys c·n … c·n + n − 1 in turn: no two of
    /// its n sets in flight on one key.
    case rotating(perConnection: Int)
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
    /// etcd only: the changes a setter has room for go as `Txn`s of up to
    /// this many puts (0: a put per request).
    var etcdTxnPuts = 0
    var maxLagEvents: Int
    /// Sets per second across all setters, or nil for as fast as the server takes them.
    var rate: Double?
    var warmupSeconds: Double
    var durationSeconds: Double
    /// A client that pings throughout, on a thread of its own; nil: none.
    var bystander: Bystander? = nil
    /// Whether an event may stand for earlier ones (kvod's slow-reader
    /// coalescing, which an unbounded setter can cause): then every expected
    /// event must be delivered or counted in a delivered event's `coalesced`.
    var coalescingAllowed = false
    /// The most one read takes from an observer connection (a reader with a
    /// small buffer pays a system call per that many bytes).
    var observerReadBytes = 256 * 1024
    /// The server, whose CPU time and resident memory over the window are reported; nil: not measured.
    var server: ServerProcess? = nil

    struct Outcome {
        var setsPerSecond: Double
        var eventsPerSecond: Double
        var latencies: Histogram
        /// The bystander's ping times, when there was one.
        var pings: Histogram?
        var lost: Int
        var outOfOrder: Int
        var problem: String?
        /// Per second of the window: earlier events that the delivered ones stood for.
        var coalescedPerSecond = 0.0
        /// Over the whole run: coalesced events, and indexes the observers never saw.
        var coalesced = 0
        var skipped = 0
        /// Bytes the observers read per event delivered, over the whole run.
        var bytesPerEvent = 0.0
        /// The observer thread's CPU time over the window ÷ the window.
        var readerBusy = 0.0
        /// The server's CPU time over the window per event delivered in it, in µs (0: not measured).
        var serverMicrosecondsPerEvent = 0.0
        /// The server's resident memory at the window's end (output it holds for observers included).
        var serverResidentBytes = 0
    }

    func run() -> Outcome {
        let signals = LoadSignals()
        let setter = Handoff(value: SetterWorker(load: self))
        let observer = Handoff(value: ObserverWorker(connections: observers, readBytes: observerReadBytes))
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
        let coalesced0 = signals.coalescedEvents.load(ordering: .acquiring)
        let server0 = ProcessCPU.seconds(server?.pid ?? 0)
        sleep(seconds: durationSeconds)
        let acknowledged1 = signals.acknowledgedSets.load(ordering: .acquiring)
        let delivered1 = signals.deliveredEvents.load(ordering: .acquiring)
        let coalesced1 = signals.coalescedEvents.load(ordering: .acquiring)
        let server1 = ProcessCPU.seconds(server?.pid ?? 0)
        let resident = server?.residentBytes() ?? 0
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        signals.recording.store(false, ordering: .releasing)
        signals.stopSetting.store(true, ordering: .releasing)
        // Whatever is still on its way gets 20 s to arrive before it counts as lost.
        let deadline = monotonicNanoseconds() + 20_000_000_000
        let accounted = { signals.deliveredEvents.load(ordering: .acquiring) + signals.coalescedEvents.load(ordering: .acquiring) }
        while !signals.settersFinished.load(ordering: .acquiring)
            || accounted() < signals.expectedEvents.load(ordering: .acquiring) {
            if monotonicNanoseconds() > deadline { break }
            usleep(2_000)
        }
        signals.abandon.store(true, ordering: .releasing)
        threads.join()
        let expected = signals.expectedEvents.load(ordering: .acquiring)
        let delivered = signals.deliveredEvents.load(ordering: .acquiring)
        let coalesced = observers.reduce(0) { $0 + $1.coalesced }
        let skipped = observers.reduce(0) { $0 + $1.skipped }
        var problem = setter.value.problem ?? observer.value.problem ?? bystander?.problem
            ?? (signals.settersFinished.load(ordering: .acquiring) ? nil : "sets still unanswered after 20 s")
        // Indexes skip in many-keys (one setter index over many keys): compared only where coalescing is expected.
        if problem == nil, !coalescingAllowed, coalesced > 0 {
            problem = "\(coalesced) event(s) coalesced in a load bounded to keep observers from lagging"
        } else if problem == nil, coalescingAllowed, skipped != coalesced {
            problem = "\(skipped) index(es) skipped but \(coalesced) counted as coalesced: events lost"
        }
        let accountedFor = delivered + (coalescingAllowed ? coalesced : 0)
        let bytes = observers.reduce(0) { $0 + $1.bytesRead }
        return Outcome(
            setsPerSecond: Double(acknowledged1 - acknowledged0) / elapsed,
            eventsPerSecond: Double(delivered1 - delivered0) / elapsed,
            latencies: observer.value.latencies,
            pings: bystander?.latencies,
            lost: max(expected - accountedFor, 0) + max(accountedFor - expected, 0),
            outOfOrder: observers.reduce(0) { $0 + $1.outOfOrder },
            problem: problem,
            coalescedPerSecond: Double(coalesced1 - coalesced0) / elapsed,
            coalesced: coalesced, skipped: skipped,
            bytesPerEvent: delivered > 0 ? Double(bytes) / Double(delivered) : 0,
            readerBusy: observer.value.recordedCPUSeconds / elapsed,
            serverMicrosecondsPerEvent: delivered1 > delivered0 && server1 > 0
                ? (server1 - server0) * 1e6 / Double(delivered1 - delivered0) : 0,
            serverResidentBytes: resident)
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
        var txn: [(prefix: [UInt8], index: Int)] = []
        var expected = 0
        var totalSent = 0
        let started = monotonicNanoseconds()
        let interval = load.rate.map { 1e9 / $0 }
        poller.add(signals.room)
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
                txn.removeAll(keepingCapacity: true)
                while room > 0 {
                    if expected - delivered >= load.maxLagEvents {
                        blockedOnLag = true
                        break
                    }
                    let key: Int
                    switch load.choice {
                    case .perConnection: key = position
                    case .random(let count, _): key = Int(random.next() % UInt64(count))
                    case .rotating(let perConnection): key = position * perConnection + connection.sent % perConnection
                    }
                    if load.etcdTxnPuts > 0 {
                        txn.append((load.prefixes[key], connection.sent))
                    } else {
                        wire.appendChange(prefix: load.prefixes[key], index: connection.sent, sentAt: now, into: &batch)
                    }
                    connection.sent += 1
                    totalSent += 1
                    expected += load.fanout[key]
                    room -= 1
                }
                for start in stride(from: 0, to: txn.count, by: max(load.etcdTxnPuts, 1)) {
                    let puts = txn[start..<min(start + load.etcdTxnPuts, txn.count)]
                    Wire.appendEtcdTxn(puts: puts, sentAt: now, into: &batch)
                    connection.expectReply(covering: puts.count)
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
            } else if blockedOnLag {
                // Sleep until the observers make room (or a reply comes),
                // unless they made some since the sets above were counted.
                signals.room.arm()
                let lag = expected - signals.deliveredEvents.load(ordering: .sequentiallyConsistent)
                poller.poll(timeoutMilliseconds: lag < load.maxLagEvents ? 0 : 5)
            } else {
                poller.poll(timeoutMilliseconds: 5)
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
    let poller: Poller
    let latencies = Histogram()
    var problem: String?
    /// This thread's CPU time while recording.
    private(set) var recordedCPUSeconds = 0.0

    init(connections: [Connection], readBytes: Int) {
        self.connections = connections
        poller = Poller(readBytes: readBytes)
        for connection in connections { poller.add(connection) }
    }

    func run(_ signals: LoadSignals) {
        var counted = 0
        var countedCoalesced = 0
        var recording = false
        var recordingSince = 0.0
        while !signals.abandon.load(ordering: .relaxed) {
            poller.poll(timeoutMilliseconds: 2)
            var total = 0
            var coalesced = 0
            for connection in connections {
                total += connection.events
                coalesced += connection.coalesced
            }
            if coalesced != countedCoalesced {
                signals.coalescedEvents.add(coalesced - countedCoalesced, ordering: .releasing)
                countedCoalesced = coalesced
            }
            if total != counted {
                signals.deliveredEvents.add(total - counted, ordering: .sequentiallyConsistent)
                counted = total
                signals.room.notify()
            }
            let shouldRecord = signals.recording.load(ordering: .relaxed)
            if shouldRecord != recording {
                recording = shouldRecord
                for connection in connections { connection.latencies = recording ? latencies : nil }
                if recording { recordingSince = threadCPUSeconds() } else { recordedCPUSeconds = threadCPUSeconds() - recordingSince }
            }
            if let broken = connections.lazy.compactMap(\.problem).first {
                problem = "observer: \(broken)"
                return
            }
            if signals.settersFinished.load(ordering: .acquiring),
               counted + countedCoalesced >= signals.expectedEvents.load(ordering: .acquiring) {
                return
            }
        }
    }
}

/// The calling thread's CPU time (user + system), in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
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
