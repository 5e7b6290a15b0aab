/// How big the cluster scenarios are. ``standard`` is what docs/PERFORMANCE.md
/// reports; ``tiny`` only proves in CI that every scenario still runs.
struct ClusterSizes: Sendable {
    /// etcd members (each kvod over etcd is pointed at its own).
    var members: Int
    /// Setter connections per host in the throughput scenario, and what each kvod client pipelines.
    var setConnections: Int
    var setPipeline: Int
    /// Writer connections, each with one set in flight, in the many-writers scenario.
    var manyWriters: Int
    var fanoutObservers: Int
    /// Changes per second in the fan-out scenario (each reaches every observer).
    var fanoutRate: Double
    var warmupSeconds: Double
    var durationSeconds: Double
    /// The latency and fan-out scenarios' window: their p99s need samples.
    var latencySeconds: Double

    static let standard = ClusterSizes(
        members: 3, setConnections: 4, setPipeline: 64, manyWriters: 64, fanoutObservers: 1000, fanoutRate: 25,
        warmupSeconds: 1, durationSeconds: 5, latencySeconds: 8)

    static let tiny = ClusterSizes(
        members: 3, setConnections: 2, setPipeline: 4, manyWriters: 4, fanoutObservers: 6, fanoutRate: 20,
        warmupSeconds: 0.2, durationSeconds: 0.5, latencySeconds: 0.5)
}

/// The scenarios of issue 18's benchmark, each run against one ``ClusterRig``.
enum ClusterScenario: Sendable, Hashable {
    /// A set through host A, one at a time; its event at observers on hosts B and C.
    case latency
    /// Pipelined setters on `hosts` hosts, each connection its own key; an observer per host of every key.
    case setThroughput(hosts: Int)
    /// Setters on host A, each connection's sets in flight on distinct
    /// objects (etcd: each connection's as one `Txn`); an observer on every host.
    case distinctObjects
    /// Many writers on host A, each with one set in flight on its own object; an observer on every host.
    case manyWriters
    /// One setter on host A at a fixed rate; the observers spread over every host.
    case fanout

    static let all: [ClusterScenario] = [.latency, .setThroughput(hosts: 1), .setThroughput(hosts: 3),
                                         .distinctObjects, .manyWriters, .fanout]

    var name: String {
        switch self {
        case .latency: "cluster-latency"
        case .setThroughput(let hosts): "cluster-set-throughput-\(hosts)"
        case .distinctObjects: "cluster-distinct-objects"
        case .manyWriters: "cluster-many-writers"
        case .fanout: "cluster-fanout"
        }
    }

    /// For `--scenario` filters.
    var family: String {
        if case .setThroughput = self { "cluster-set-throughput" } else { name }
    }

    /// Local mode is the fan-out's reference (issue 18: "at local-mode speed"), and the latency's floor.
    var peers: [ClusterPeer] {
        switch self {
        case .latency, .fanout: ClusterPeer.allCases
        case .setThroughput, .distinctObjects, .manyWriters: [.kvodOverEtcd, .etcd]
        }
    }

    var hosts: Int {
        if case .setThroughput(let hosts) = self { hosts } else { 3 }
    }

    func run(on rig: ClusterRig, sizes: ClusterSizes) throws(BenchError) -> ScenarioResult {
        switch self {
        case .latency: try Self.latency(rig, sizes)
        case .setThroughput(let hosts): try Self.setThroughput(rig, sizes, hosts: hosts)
        case .distinctObjects: try Self.distinctObjects(rig, sizes)
        case .manyWriters: try Self.manyWriters(rig, sizes)
        case .fanout: try Self.fanout(rig, sizes)
        }
    }

    private static func milliseconds(_ histogram: Histogram, _ fraction: Double) -> Double {
        Double(histogram.percentile(fraction)) / 1e6
    }

    /// One setter on host 0 with one set in flight (each sent when the last
    /// was answered); an observer of the key on hosts 1 and 2. The latency is
    /// from a set's send to its event's read on another host.
    static func latency(_ rig: ClusterRig, _ sizes: ClusterSizes) throws(BenchError) -> ScenarioResult {
        let key = BenchKey(object: "lat/0", keyPath: "v")
        let observers = try observers(rig, on: [1, 2], keys: [key])
        let setter = try rig.connect(host: 0)
        let outcome = ChangeLoad(
            setters: [setter], observers: observers, prefixes: [rig.wire.changePrefix(key)], fanout: [2],
            choice: .perConnection, pipeline: 1, maxLagEvents: Int.max, rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.latencySeconds
        ).run()
        let row = "set on host A to its event on hosts B and C, one set in flight"
        return ScenarioResult(
            figures: [
                Figure(row: row + ", p50", unit: "ms", higherIsBetter: false, value: milliseconds(outcome.latencies, 0.5)),
                Figure(row: row + ", p99", unit: "ms", higherIsBetter: false, value: milliseconds(outcome.latencies, 0.99)),
                Figure(row: "sets answered per second, one in flight (1 ÷ the round trip)", unit: "sets/s",
                       higherIsBetter: true, value: outcome.setsPerSecond),
            ],
            problems: outcome.problems)
    }

    /// An observer of every key on each host of `hosts` (a host as often as it is named), registered.
    private static func observers(_ rig: ClusterRig, on hosts: [Int], keys: [BenchKey]) throws(BenchError) -> [Connection] {
        let observers = try hosts.map { host throws(BenchError) in
            let observer = try rig.connect(host: host)
            observer.lastIndex = [Int](repeating: -1, count: keys.count)
            return observer
        }
        try rig.register(observers, keys: keys)
        return observers
    }

    /// C setter connections on each of `hosts` hosts, kvod's pipelining P sets
    /// each, etcd's one put at a time (HTTP/1.1 keep-alive, no pipelining);
    /// every connection sets its own key; one observer (etcd: one watch of the
    /// prefix) on each host used.
    static func setThroughput(_ rig: ClusterRig, _ sizes: ClusterSizes, hosts: Int) throws(BenchError) -> ScenarioResult {
        let count = hosts * sizes.setConnections
        let keys = (0..<count).map { BenchKey(object: "set/\($0)", keyPath: "v") }
        let observers = try observers(rig, on: Array(0..<hosts), keys: keys)
        var setters: [Connection] = []
        for index in 0..<count { setters.append(try rig.connect(host: index / sizes.setConnections)) }
        let pipeline = rig.peer == .etcd ? 1 : sizes.setPipeline
        let through = "through \(hosts) host\(hosts == 1 ? "" : "s")"
        let load = ChangeLoad(
            setters: setters, observers: observers, prefixes: keys.map(rig.wire.changePrefix),
            fanout: [Int](repeating: hosts, count: count), choice: .perConnection, pipeline: pipeline,
            maxLagEvents: 8192, rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.durationSeconds)
        return measured(load, on: rig, comparable: false,
                        row: "set throughput \(through), \(count) client connections (kvod: \(sizes.setPipeline) pipelined each), "
                            + "an observer per host",
                        revisionRow: "changes per etcd revision (per Txn), set throughput \(through)", cpuRow: "CPU per set \(through)")
    }

    /// C setter connections on host 0, each keeping P sets in flight, each
    /// set to the next of its own P objects, so that no two in flight change
    /// one object (kvod cannot fold them into one document write); etcd's
    /// connections each send their P puts as one `Txn`, etcd's own batching.
    /// One observer of every object (etcd: a watch of the prefix) on each of
    /// the 3 hosts, so each kvod's watch has its etcd counterpart. Issue 35:
    /// kvod's changes, two `Txn` operations each, at half etcd's puts at least.
    static func distinctObjects(_ rig: ClusterRig, _ sizes: ClusterSizes) throws(BenchError) -> ScenarioResult {
        try writers(rig, sizes, connections: sizes.setConnections, inFlight: sizes.setPipeline,
                    row: distinctObjectsRow(sizes), figure: "distinct objects")
    }

    /// The row of the distinct-objects throughput, for the report's target.
    static func distinctObjectsRow(_ sizes: ClusterSizes) -> String {
        "distinct objects through 1 host, \(sizes.setConnections) connections × \(sizes.setPipeline) in flight "
            + "(etcd: a \(sizes.setPipeline)-put Txn each), an observer per host of 3"
    }

    /// W writer connections on host 0, each with one set in flight (sent
    /// when the last was answered) on its own object, as many clients that
    /// each wait for their reply; etcd's, one put each at a time: like for
    /// like. What kvod's group commit across connections is for.
    static func manyWriters(_ rig: ClusterRig, _ sizes: ClusterSizes) throws(BenchError) -> ScenarioResult {
        try writers(rig, sizes, connections: sizes.manyWriters, inFlight: 1,
                    row: "many writers through 1 host, \(sizes.manyWriters) connections × 1 in flight, each its own "
                        + "object (etcd: a put each), an observer per host of 3", figure: "many writers")
    }

    /// `connections` writers on host 0, each with `inFlight` sets in flight on
    /// as many objects of its own, in turn (etcd: as one `Txn` when more than
    /// one); an observer of every object (etcd: a watch of the prefix) on each host.
    private static func writers(_ rig: ClusterRig, _ sizes: ClusterSizes, connections: Int, inFlight: Int,
                                row: String, figure: String) throws(BenchError) -> ScenarioResult {
        let count = connections * inFlight
        let keys = (0..<count).map { BenchKey(object: "dist/\($0)", keyPath: "v") }
        let observers = try observers(rig, on: Array(0..<rig.hosts), keys: keys)
        var setters: [Connection] = []
        for _ in 0..<connections { setters.append(try rig.connect(host: 0)) }
        let load = ChangeLoad(
            setters: setters, observers: observers, prefixes: keys.map(rig.wire.changePrefix),
            fanout: [Int](repeating: rig.hosts, count: count), choice: .rotating(perConnection: inFlight),
            pipeline: inFlight, etcdTxnPuts: rig.peer == .etcd && inFlight > 1 ? inFlight : 0,
            maxLagEvents: 8192, rate: nil,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.durationSeconds)
        return measured(load, on: rig, comparable: true, row: row,
                        revisionRow: "\(figure): changes per etcd revision (per Txn)", cpuRow: "CPU per set, \(figure)")
    }

    /// Runs `load`: its sets answered per second in `row`, and per set over the whole run (warm-up and
    /// drain included), whether a server, not the round trip, is the limit: the changes each etcd
    /// revision carried (each `Txn` makes one) in `revisionRow`, and the CPU time the kvods and the
    /// members used (`cpuRow`: the kvods, `cpuRow`: the etcd members). `comparable`: the sets' and the members' figures'.
    private static func measured(_ load: ChangeLoad, on rig: ClusterRig, comparable: Bool, row: String,
                                 revisionRow: String, cpuRow: String) -> ScenarioResult {
        let cpuBefore = rig.cpuSeconds()
        let revisionBefore = rig.etcdRevision()
        let outcome = load.run()
        let cpuAfter = rig.cpuSeconds()
        let sets = Double(load.setters.reduce(0) { $0 + $1.replies })
        var figures = [Figure(row: row, unit: "sets/s", higherIsBetter: true, value: outcome.setsPerSecond,
                              comparable: comparable)]
        guard sets > 0 else { return ScenarioResult(figures: figures, problems: outcome.problems) }
        if let before = revisionBefore, let after = rig.etcdRevision(), after > before {
            figures.append(Figure(row: revisionRow, unit: "changes",
                                  higherIsBetter: true, value: sets / Double(after - before), comparable: false))
        }
        if rig.peer == .kvodOverEtcd {
            figures.append(Figure(row: cpuRow + ": the kvods", unit: "µs", higherIsBetter: false,
                                  value: (cpuAfter.kvods - cpuBefore.kvods) / sets * 1e6))
        }
        figures.append(Figure(row: cpuRow + ": the etcd members", unit: "µs", higherIsBetter: false,
                              value: (cpuAfter.etcd - cpuBefore.etcd) / sets * 1e6, comparable: comparable))
        return ScenarioResult(figures: figures, problems: outcome.problems)
    }

    /// One setter on host 0 at `fanoutRate` changes a second (one in flight:
    /// the rate is below one over the round trip), the observers of its key
    /// spread evenly over the hosts (local mode: all on its one kvod, so the
    /// generator reads as many sockets). The set-to-event latency over all
    /// observers, and each change's spread from its first observer to its last.
    static func fanout(_ rig: ClusterRig, _ sizes: ClusterSizes) throws(BenchError) -> ScenarioResult {
        let key = BenchKey(object: "fan/0", keyPath: "v")
        let count = sizes.fanoutObservers
        let arrivals = FanoutArrivals(observers: count)
        let observers = try observers(rig, on: (0..<count).map { $0 % rig.hosts }, keys: [key])
        for observer in observers { observer.arrivals = arrivals }
        let setter = try rig.connect(host: 0)
        let outcome = ChangeLoad(
            setters: [setter], observers: observers, prefixes: [rig.wire.changePrefix(key)], fanout: [count],
            choice: .perConnection, pipeline: 1, maxLagEvents: Int.max, rate: sizes.fanoutRate,
            warmupSeconds: sizes.warmupSeconds, durationSeconds: sizes.latencySeconds
        ).run()
        var notes: [String] = []
        if outcome.setsPerSecond < sizes.fanoutRate * 0.9 {
            notes.append("the setter fell behind \(Int(sizes.fanoutRate)) sets/s (reached \(Int(outcome.setsPerSecond)))")
        }
        let spreads = arrivals.spreads()
        let row = "fan-out, \(count) observers over \(rig.hosts) hosts (local mode: one), \(Int(sizes.fanoutRate)) sets/s"
        return ScenarioResult(
            figures: [
                Figure(row: row + ": set to event, p50", unit: "ms", higherIsBetter: false,
                       value: milliseconds(outcome.latencies, 0.5)),
                Figure(row: row + ": set to event, p99", unit: "ms", higherIsBetter: false,
                       value: milliseconds(outcome.latencies, 0.99)),
                Figure(row: row + ": a change's first observer to its last, p50", unit: "ms", higherIsBetter: false,
                       value: milliseconds(spreads, 0.5)),
                Figure(row: row + ": a change's first observer to its last, p99", unit: "ms", higherIsBetter: false,
                       value: milliseconds(spreads, 0.99)),
            ],
            problems: outcome.problems, notes: notes)
    }
}
