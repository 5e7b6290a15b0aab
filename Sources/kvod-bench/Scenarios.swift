/// One figure of one scenario for one peer.
struct Figure: Sendable {
    /// The table row, e.g. `fanout, 100 observers`.
    var row: String
    /// The unit, e.g. `events/s`.
    var unit: String
    var higherIsBetter: Bool
    var value: Double
    /// Whether the peers ran the same load, so that their ratio means
    /// something: not in `cluster-set-throughput`, where a kvod connection's
    /// 64 sets of one key fold into one `Txn` write and etcd's client puts
    /// one value at a time.
    var comparable = true
}

/// What one scenario run produced: its figures, or why it failed.
struct ScenarioResult: Sendable {
    var figures: [Figure]
    /// Lost, duplicated or out-of-order events, error replies, broken
    /// connections: the run is wrong, and fails.
    var problems: [String]
    /// What qualifies a figure without making it wrong (a paced setter that
    /// fell behind its rate on a busy machine).
    var notes: [String] = []
}

/// The load scenarios of issue 5, each run against one server.
enum Scenario: Sendable, Hashable {
    /// Sets as `ClientShape`'s client spells them (issue 16).
    case setThroughput(ClientShape)
    /// `compact`: kvod's observers ask for compact events (Redis's run is the same).
    case fanout(observers: Int, ClientShape, compact: Bool = false)
    /// Fan-out with the setter flat out, no bound on events in flight unless
    /// `lagBound` (the bounded twin, for comparison: issue 16 item 3).
    case fanoutFlatOut(observers: Int, lagBound: Bool, compact: Bool = false)
    /// Fan-out to observers that are KVOClient processes (kvod only).
    case kvoclientFanout(observers: Int)
    case fanoutLatency
    case manyKeys
    case memory
    /// Set throughput with each server's data on disk (docs/DURABILITY.md).
    case durability(Persistence, SetShape)

    static func all(_ sizes: Sizes) -> [Scenario] {
        var all: [Scenario] = ClientShape.allCases.map { Scenario.setThroughput($0) }
        all += sizes.fanoutObservers.map { Scenario.fanout(observers: $0, .kvoclient) }
        // Compact events (issue 16 item 3's lever) at the fan-outs the targets name.
        all += sizes.fanoutObservers.suffix(2).map { Scenario.fanout(observers: $0, .kvoclient, compact: true) }
        // The other shapes at the fan-outs the targets name (the largest two), to keep a run short.
        for shape in ClientShape.allCases where shape != .kvoclient {
            all += sizes.fanoutObservers.suffix(2).map { Scenario.fanout(observers: $0, shape) }
        }
        all += sizes.flatOutObservers.flatMap {
            [Scenario.fanoutFlatOut(observers: $0, lagBound: false), .fanoutFlatOut(observers: $0, lagBound: true),
             .fanoutFlatOut(observers: $0, lagBound: false, compact: true),
             .fanoutFlatOut(observers: $0, lagBound: true, compact: true)]
        }
        all += [.kvoclientFanout(observers: sizes.kvoclientObservers), .fanoutLatency, .manyKeys, .memory]
        for shape in sizes.durabilityShapes {
            all += Persistence.allCases.map { Scenario.durability($0, shape) }
        }
        return all
    }

    var name: String {
        switch self {
        case .setThroughput(let shape): "set-throughput" + shape.nameSuffix
        case .fanout(let observers, let shape, let compact):
            "fanout-\(observers)" + shape.nameSuffix + (compact ? "-compact" : "")
        case .fanoutFlatOut(let observers, let lagBound, let compact):
            "fanout-flat-out-\(observers)" + (lagBound ? "-lag-bound" : "") + (compact ? "-compact" : "")
        case .kvoclientFanout(let observers): "fanout-\(observers)-kvoclient-processes"
        case .fanoutLatency: "fanout-latency"
        case .manyKeys: "many-keys"
        case .memory: "memory"
        case .durability(let persistence, let shape):
            "durability-\(persistence.rawValue)-c\(shape.connections)p\(shape.pipeline)"
        }
    }

    /// The scenario family, for `--scenario` filters.
    var family: String {
        switch self {
        case .setThroughput: "set-throughput"
        case .fanout, .kvoclientFanout: "fanout"
        case .fanoutFlatOut: "fanout-flat-out"
        case .durability: Self.durabilityFamily
        default: name
        }
    }

    /// The durability scenarios' family, which docs/PERFORMANCE.md reports in a section of its own.
    static let durabilityFamily = "durability"

    /// How its kvod client spells requests.
    var shape: ClientShape {
        switch self {
        case .setThroughput(let shape), .fanout(_, let shape, _): shape
        default: .kvoclient
        }
    }

    /// Whether it runs against `peer` (Redis has no KVOClient observers).
    func runs(on peer: Peer) -> Bool {
        if case .kvoclientFanout = self { peer == .kvod } else { true }
    }

    /// How the servers keep their data while this scenario runs.
    var persistence: Persistence {
        if case .durability(let persistence, _) = self { persistence } else { .none }
    }

    func run(on server: ServerProcess, sizes: Sizes) throws(BenchError) -> ScenarioResult {
        switch self {
        case .setThroughput(let shape): try Self.setThroughput(server, sizes, shape)
        case .fanout(let observers, let shape, let compact):
            try Self.fanout(server, sizes, observers: observers, rate: nil, shape, compact: compact)
        case .fanoutFlatOut(let observers, let lagBound, let compact):
            try FlatOutFanout.run(server, sizes, observers: observers, lagBound: lagBound, compact: compact)
        case .kvoclientFanout(let observers): try KVOClientFanout.run(server, sizes, observers: observers)
        case .fanoutLatency: try Self.fanout(server, sizes, observers: sizes.latencyObservers, rate: sizes.latencyRate)
        case .manyKeys: try Self.manyKeys(server, sizes)
        case .memory: try Self.memory(server, sizes)
        case .durability(let persistence, let shape): try Self.durability(server, sizes, persistence, shape)
        }
    }
}

// MARK: - The scenarios

extension Scenario {
    /// C connections × P pipelined sets, each connection on its own key, with
    /// one observer of all C keys attached (Redis: `SET` + keyspace events).
    static func setThroughput(_ server: ServerProcess, _ sizes: Sizes,
                              _ client: ClientShape) throws(BenchError) -> ScenarioResult {
        let shape = SetShape(connections: sizes.setConnections, pipeline: sizes.setPipeline)
        let outcome = try sets(server, sizes, shape, client: client)
        let row = "set-throughput (\(shape.connections) conn × \(shape.pipeline) pipelined, 1 observer)"
            + client.rowSuffix
        return ScenarioResult(
            figures: [Figure(row: row, unit: "sets/s", higherIsBetter: true, value: outcome.setsPerSecond)],
            problems: outcome.problems)
    }

    /// set-throughput's load in `shape`: one setter connection per key, one
    /// observer of every key; and a ``Bystander`` pinging throughout, if asked.
    static func sets(_ server: ServerProcess, _ sizes: Sizes, _ shape: SetShape, seconds: Double? = nil,
                     bystander: Bool = false, client: ClientShape = .kvoclient) throws(BenchError) -> ChangeLoad.Outcome {
        let wire = Wire(peer: server.peer, flavour: .keyspace, shape: client)
        let keys = (0..<shape.connections).map { BenchKey(object: "set/\($0)", keyPath: "v") }
        let observer = try Connection(path: server.socketPath, wire: wire)
        observer.lastIndex = [Int](repeating: -1, count: keys.count)
        _ = try Registration.run([observer], requests: { _ in keys.flatMap(wire.observeRequest) },
                                 count: { _ in keys.count })
        var setters: [Connection] = []
        for _ in keys { setters.append(try Connection(path: server.socketPath, wire: wire)) }
        return ChangeLoad(
            setters: setters, observers: [observer], prefixes: keys.map(wire.changePrefix),
            fanout: [Int](repeating: 1, count: keys.count), choice: .perConnection,
            pipeline: shape.pipeline, maxLagEvents: 8192, rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: seconds ?? sizes.durationSeconds,
            bystander: bystander ? try Bystander(path: server.socketPath, peer: server.peer) : nil
        ).run()
    }

    /// The one key of the fan-out scenarios.
    static let fanoutKey = BenchKey(object: "fan/0", keyPath: "v")

    /// `count` connections, each observing `key` (registered, replies in), ready for a ``ChangeLoad``.
    static func observersOfOneKey(_ server: ServerProcess, _ wire: Wire, _ key: BenchKey,
                                  count: Int) throws(BenchError) -> [Connection] {
        var observers: [Connection] = []
        for _ in 0..<count {
            let observer = try Connection(path: server.socketPath, wire: wire)
            observer.lastIndex = [-1]
            observers.append(observer)
        }
        let request = wire.observeRequest(key)
        _ = try Registration.run(observers, requests: { _ in request }, count: { _ in 1 })
        return observers
    }

    /// One setter, O observers of one key (Redis: `PUBLISH`/`SUBSCRIBE`).
    /// Unpaced: events delivered per second. Paced at `rate` sets/s: latency.
    static func fanout(_ server: ServerProcess, _ sizes: Sizes, observers count: Int,
                       rate: Double?, _ client: ClientShape = .kvoclient,
                       compact: Bool = false) throws(BenchError) -> ScenarioResult {
        var wire = Wire(peer: server.peer, flavour: .pubSub, shape: client)
        wire.compactEvents = compact
        let key = fanoutKey
        let observers = try observersOfOneKey(server, wire, key, count: count)
        let setter = try Connection(path: server.socketPath, wire: wire)
        let outcome = ChangeLoad(
            setters: [setter], observers: observers, prefixes: [wire.changePrefix(key)], fanout: [count],
            choice: .perConnection, pipeline: rate == nil ? sizes.fanoutPipeline : 1_000_000,
            maxLagEvents: rate == nil ? max(sizes.fanoutPipeline * count, 8192) : Int.max, rate: rate,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: rate == nil ? sizes.durationSeconds : sizes.latencySeconds
        ).run()
        let problems = outcome.problems
        var notes: [String] = []
        guard let rate else {
            let row = "fanout, \(count) observer\(count == 1 ? "" : "s") of one key" + client.rowSuffix
                + (compact ? ", compact events" : "")
            var figures = [Figure(row: row, unit: "events/s", higherIsBetter: true, value: outcome.eventsPerSecond)]
            // Where the observer thread bounds the rate (issue 16 item 3), these say so.
            if count >= 100 {
                figures.append(Figure(row: row + ", observer thread busy", unit: "% of a core", higherIsBetter: false,
                                      value: 100 * outcome.readerBusy))
                figures.append(Figure(row: row + ", observer thread CPU per event", unit: "ns", higherIsBetter: false,
                                      value: outcome.eventsPerSecond > 0 ? 1e9 * outcome.readerBusy / outcome.eventsPerSecond : 0))
            }
            return ScenarioResult(figures: figures, problems: problems)
        }
        if outcome.setsPerSecond < rate * 0.95 {
            notes.append("the setter fell behind \(Int(rate)) sets/s (reached \(Int(outcome.setsPerSecond)))")
        }
        let row = "fanout latency, \(count) observers at \(Int(rate)) sets/s"
        let microseconds = { (fraction: Double) in Double(outcome.latencies.percentile(fraction)) / 1000 }
        return ScenarioResult(
            figures: [
                Figure(row: row + ", p50", unit: "µs", higherIsBetter: false, value: microseconds(0.5)),
                Figure(row: row + ", p99", unit: "µs", higherIsBetter: false, value: microseconds(0.99)),
                Figure(row: row + ", p99.9", unit: "µs", higherIsBetter: false, value: microseconds(0.999)),
            ],
            problems: problems, notes: notes)
    }

    /// O observers × K keys each, drawn at random from a key space of M
    /// (every key ends up with about O·K/M observers); registration rate,
    /// then events per second while one setter sets random keys
    /// (Redis: `SUBSCRIBE __keyspace@0__:key`, `SET`).
    static func manyKeys(_ server: ServerProcess, _ sizes: Sizes) throws(BenchError) -> ScenarioResult {
        let wire = Wire(peer: server.peer, flavour: .keyspace)
        let space = sizes.manyKeysKeySpace
        let keys = (0..<space).map { BenchKey(object: "k/\($0)", keyPath: "v") }
        var random = SplitMix64(seed: 5)
        var fanout = [Int](repeating: 0, count: space)
        var chosen: [[Int]] = []
        var observers: [Connection] = []
        for _ in 0..<sizes.manyKeysObservers {
            var pool = Array(0..<space)
            for index in 0..<sizes.manyKeysPerObserver {
                pool.swapAt(index, index + Int(random.next() % UInt64(space - index)))
            }
            let mine = Array(pool.prefix(sizes.manyKeysPerObserver))
            for key in mine { fanout[key] += 1 }
            chosen.append(mine)
            let observer = try Connection(path: server.socketPath, wire: wire)
            observer.lastIndex = [Int](repeating: -1, count: space)
            observers.append(observer)
        }
        let requests = keys.map(wire.observeRequest)
        let seconds = try Registration.run(
            observers, requests: { chosen[$0].flatMap { requests[$0] } }, count: { chosen[$0].count })
        let setter = try Connection(path: server.socketPath, wire: wire)
        let averageFanout = max(sizes.manyKeysObservers * sizes.manyKeysPerObserver / space, 1)
        let outcome = ChangeLoad(
            setters: [setter], observers: observers, prefixes: keys.map(wire.changePrefix), fanout: fanout,
            choice: .random(count: space, seed: 7), pipeline: sizes.fanoutPipeline,
            maxLagEvents: max(sizes.fanoutPipeline * averageFanout, 8192), rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.durationSeconds
        ).run()
        let total = sizes.manyKeysObservers * sizes.manyKeysPerObserver
        let shape = "\(sizes.manyKeysObservers) observers × \(sizes.manyKeysPerObserver) keys of \(space)"
        return ScenarioResult(
            figures: [
                Figure(row: "many-keys, observe requests (\(shape))", unit: "requests/s", higherIsBetter: true,
                       value: Double(total) / seconds),
                Figure(row: "many-keys, events while setting random keys", unit: "events/s", higherIsBetter: true,
                       value: outcome.eventsPerSecond),
            ],
            problems: outcome.problems)
    }

    /// N connections × M observations each, every one a distinct key path
    /// (`m/<connection>` `f<j>`; Redis: `SUBSCRIBE m/<connection>.f<j>`):
    /// the server's whole resident memory, once settled, divided by the observations.
    static func memory(_ server: ServerProcess, _ sizes: Sizes) throws(BenchError) -> ScenarioResult {
        let wire = Wire(peer: server.peer, flavour: .pubSub)
        var connections: [Connection] = []
        connections.reserveCapacity(sizes.memoryConnections)
        for _ in 0..<sizes.memoryConnections {
            connections.append(try Connection(path: server.socketPath, wire: wire))
        }
        let perConnection = sizes.memoryPerConnection
        _ = try Registration.run(
            connections,
            requests: { connection in
                (0..<perConnection).flatMap { wire.observeRequest(BenchKey(object: "m/\(connection)", keyPath: "f\($0)")) }
            },
            count: { _ in perConnection })
        let total = sizes.memoryConnections * perConnection
        let resident = server.settledResidentBytes()
        let row = "memory, \(total.formatted) observations over \(sizes.memoryConnections.formatted) connections"
        return ScenarioResult(
            figures: [Figure(row: row, unit: "bytes RSS/observation", higherIsBetter: false,
                             value: Double(resident) / Double(total))],
            problems: [])
    }
}

extension ChangeLoad.Outcome {
    var problems: [String] {
        var found: [String] = []
        if let problem { found.append(problem) }
        if lost > 0 { found.append("\(lost) event(s) lost or duplicated") }
        if outOfOrder > 0 { found.append("\(outOfOrder) event(s) out of order") }
        return found
    }
}

extension Int {
    /// `1000000` → `1,000,000`.
    var formatted: String {
        let digits = Array(String(self))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
