import Benchmark
@_spi(Benchmarks) import KVOEngine
import KVOValues

// The engine's hot paths, in process, with malloc counts (docs/PERFORMANCE.md):
// decode a request, encode an event, and dispatch one change to 1, 100 and
// 10,000 matching observations, with and without 1,000,000 that do not match
// (the index must make the second cost what the first does).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 200)

    for (name, line) in RequestLines.all {
        Benchmark("decode \(name)") { benchmark in
            for _ in benchmark.scaledIterations {
                line.withUnsafeBytes { blackHole(RequestDecoder.decode($0)) }
            }
        }
    }

    Benchmark("encode a change event") { benchmark in
        let head = EventEncoder.head(object: "person/1", keyPath: "address.city")
        let value: JSONValue = ["city": "Oslo", "zip": 150]
        var bytes: [UInt8] = []
        for _ in benchmark.scaledIterations {
            bytes.removeAll(keepingCapacity: true)
            EventEncoder.change(into: &bytes, head: head, kind: .setting, new: .some(value), old: .some(nil),
                                indexes: nil, seq: 123_456)
            blackHole(bytes)
        }
    }

    for matching in [1, 100, 10_000] {
        for idle in [0, 1_000_000] {
            let fixture = DispatchFixture(matching: matching, idle: idle)
            Benchmark(
                "dispatch a change to \(matching) of \(matching + idle) observations",
                configuration: .init(scalingFactor: matching >= 10_000 ? .one : .kilo),
                closure: { benchmark in
                    for _ in benchmark.scaledIterations { fixture.change() }
                },
                setup: { fixture.build() },
                teardown: { fixture.tearDown() })
        }
    }

    // Issue 13: prefix observations of other names must not tax a change
    // (target: within 10 % of the same change with none), and a page of
    // `list` must not scan the objects outside it.
    for prefixes in [0, 100_000] {
        let fixture = DispatchFixture(matching: 1, idle: 0, otherPrefixes: prefixes)
        Benchmark(
            "prefixes: a change to 1 observation among \(prefixes) prefix observations of other prefixes",
            closure: { benchmark in
                for _ in benchmark.scaledIterations { fixture.change() }
            },
            setup: { fixture.build() },
            teardown: { fixture.tearDown() })
    }
    // Issue 14: a connection that owned 100,000 values closes, or 100,000
    // deadlines pass at once; kvod deletes them in slices of 500 between
    // its other work, so what matters is the cost of closing and of a slice.
    for cause in [LeaseFixture.Cause.disconnect, .ttl] {
        let leases = LeaseFixture(values: 100_000, cause: cause)
        Benchmark(
            "leases: \(cause == .disconnect ? "close the owner of" : "expire") 100,000 values (queueing them)",
            configuration: .init(scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 8),
            closure: { benchmark in
                leases.grant()
                benchmark.startMeasurement()
                leases.end()
                benchmark.stopMeasurement()
                leases.drain()
            },
            teardown: { leases.tearDown() })
        Benchmark(
            "leases: one slice of \(LeaseFixture.slice) deletions \(cause == .disconnect ? "after a close" : "of expired values")",
            configuration: .init(scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 100),
            closure: { benchmark in
                leases.ensurePending()
                benchmark.startMeasurement()
                leases.slice()
                benchmark.stopMeasurement()
            },
            teardown: { leases.tearDown() })
    }
    // Issue 15: a replace of one element of a 100,000-element array, observed
    // with `@sum` (kept up to date: one pass before the change, shared) and,
    // for reference, observed as the array itself.
    for keyPath in ["v.@sum", "v"] {
        let computed = ComputedFixture(count: 100_000, observers: 100, keyPath: keyPath)
        Benchmark(
            "computed: replace 1 of 100,000 elements, 100 observations of \(keyPath)",
            configuration: .init(scalingFactor: .one),
            closure: { benchmark in
                for _ in benchmark.scaledIterations { computed.change() }
            },
            setup: { computed.build() },
            teardown: { computed.tearDown() })
    }
    let listing = ListFixture(objects: 1_000_000)
    Benchmark(
        "list 1,000 names from the middle of 1,000,000 objects",
        configuration: .init(scalingFactor: .one),
        closure: { benchmark in
            for _ in benchmark.scaledIterations { listing.listPage() }
        },
        setup: { listing.build() },
        teardown: { listing.tearDown() })
}

/// Request lines as clients send them.
enum RequestLines {
    static let all: [(String, [UInt8])] = [
        ("a set request", Array(#"{"op":"set","object":"person/1","keyPath":"name","value":"xsc"}"#.utf8)),
        ("an observe request",
         Array(#"{"op":"observe","object":"person/1","keyPath":"name","options":["new","old"]}"#.utf8)),
    ]
}

/// An engine where `matching` clients observe one key and `idle` observations
/// (10,000 clients × 100 key paths of their own object, as in the memory
/// scenario) match nothing, nor do `otherPrefixes` prefix observations of
/// names that share the changed object's first bytes (`m/N/` beside `m/hot`);
/// ``change()`` sets the key and drains every output.
final class DispatchFixture: @unchecked Sendable {
    // @unchecked: built in its benchmark's setup, used by that benchmark alone;
    // ordo-one runs benchmarks one at a time, setup and measurement on one thread.
    let matching: Int
    let idle: Int
    let otherPrefixes: Int
    private var engine: Engine?
    private var setter: ClientController?
    private var clients: [ClientController] = []
    private var observers: [ClientController] = []
    private var sequence = 0
    /// Set requests with changing values, made in advance.
    private let lines: [[UInt8]] = (0..<64).map {
        Array(#"{"op":"set","object":"m/hot","keyPath":"v","value":\#($0)}"#.utf8)
    }

    init(matching: Int, idle: Int, otherPrefixes: Int = 0) {
        self.matching = matching
        self.idle = idle
        self.otherPrefixes = otherPrefixes
    }

    func build() {
        let engine = Engine()
        let keyPath = try! ObservedPath(parsing: "v")
        for client in 0..<(idle / 100) {
            let idler = engine.makeClient()
            for path in 0..<100 {
                idler.observe("m/\(client)", keyPath: try! ObservedPath(parsing: "f\(path)"), options: [.new],
                              context: nil)
            }
            clients.append(idler)
        }
        if otherPrefixes > 0 {
            let idler = engine.makeClient()
            for prefix in 0..<otherPrefixes {
                idler.observe(.prefix("m/\(prefix)/"), keyPath: keyPath, options: [.new], context: nil)
            }
            clients.append(idler)
        }
        for _ in 0..<matching {
            let observer = engine.makeClient()
            observer.observe("m/hot", keyPath: keyPath, options: [.new], context: nil)
            observers.append(observer)
        }
        setter = engine.makeClient()
        self.engine = engine
    }

    func change() {
        guard let engine, let setter else { return }
        sequence &+= 1
        lines[sequence & 63].withUnsafeBytes { engine.handle(line: $0, from: setter) }
        setter.output.removeAll(keepingCapacity: true)
        for observer in observers { observer.output.removeAll(keepingCapacity: true) }
    }

    func tearDown() {
        for client in clients + observers { engine?.closeClient(client) }
        if let setter { engine?.closeClient(setter) }
        clients = []
        observers = []
        setter = nil
        engine = nil
    }
}

/// An engine holding `objects` objects; ``listPage()`` asks for 1,000 names
/// from the middle, as a client paging with `after` does.
final class ListFixture: @unchecked Sendable {
    // @unchecked: as DispatchFixture.
    let objects: Int
    private var engine: Engine?
    private var client: ClientController?
    private var line: [UInt8] = []

    init(objects: Int) {
        self.objects = objects
    }

    func build() {
        let engine = Engine()
        let client = engine.makeClient()
        for index in 0..<objects {
            Array(#"{"op":"set","object":"o/\#(index)","keyPath":"k","value":1}"#.utf8).withUnsafeBytes {
                engine.handle(line: $0, from: client)
            }
            client.output.removeAll(keepingCapacity: true)
        }
        line = Array(#"{"op":"list","prefix":"o/","after":"o/5","limit":1000}"#.utf8)
        self.engine = engine
        self.client = client
    }

    func listPage() {
        guard let engine, let client else { return }
        line.withUnsafeBytes { engine.handle(line: $0, from: client) }
        blackHole(client.output.count)
        client.output.removeAll(keepingCapacity: true)
    }

    func tearDown() {
        if let client { engine?.closeClient(client) }
        client = nil
        engine = nil
    }
}

/// An engine where one client sets `values` ephemeral values (or values with
/// a one-second ttl), with an observer of every one of them by prefix.
final class LeaseFixture: @unchecked Sendable {
    // @unchecked: as DispatchFixture.
    enum Cause { case disconnect, ttl }
    /// kvod's slice (the budget of Engine.releaseDueValues that the daemon's lease timer takes).
    static let slice = 500
    final class Clock: @unchecked Sendable { var now: Double = 1_000_000 }
    let values: Int
    let cause: Cause
    private let clock = Clock()
    private var engine: Engine?
    private var owner: ClientController?
    private var observer: ClientController?

    init(values: Int, cause: Cause) {
        self.values = values
        self.cause = cause
    }

    private func makeEngine() -> Engine {
        if let engine { return engine }
        var configuration = EngineConfiguration()
        let clock = self.clock
        configuration.wallClock = { clock.now }
        let engine = Engine(configuration: configuration)
        let observer = engine.makeClient()
        Array(#"{"op":"observe","prefix":"lease/","options":["new"]}"#.utf8).withUnsafeBytes {
            engine.handle(line: $0, from: observer)
        }
        self.engine = engine
        self.observer = observer
        return engine
    }

    /// A new owner sets the values.
    func grant() {
        let engine = makeEngine()
        let owner = engine.makeClient()
        let lifetime = cause == .disconnect ? #""ephemeral":true"# : #""ttl":1"#
        for index in 0..<values {
            Array(#"{"op":"set","object":"lease/\#(index % 1000)","keyPath":"k\#(index)","value":1,\#(lifetime)}"#.utf8)
                .withUnsafeBytes { engine.handle(line: $0, from: owner) }
        }
        owner.output.removeAll(keepingCapacity: true)
        observer?.output.removeAll(keepingCapacity: true)
        self.owner = owner
    }

    /// The owner closes, or the deadlines pass: the deletions are queued (or due).
    func end() {
        guard let engine, let owner else { return }
        switch cause {
        case .disconnect: engine.closeClient(owner)
        case .ttl: clock.now += 2
        }
    }

    /// One slice of deletions, their events drained.
    func slice() {
        guard let engine else { return }
        blackHole(engine.releaseDueValues(budget: Self.slice))
        observer?.output.removeAll(keepingCapacity: true)
    }

    func drain() {
        guard let engine else { return }
        while engine.releaseDueValues(budget: 500) { observer?.output.removeAll(keepingCapacity: true) }
        observer?.output.removeAll(keepingCapacity: true)
        if let owner, !owner.isClosed { engine.closeClient(owner) }
    }

    /// Deletions are due: grants and ends a round when the last one is spent.
    func ensurePending() {
        guard let engine, engine.hasPendingReleases || engine.nextLeaseDeadline.map({ $0 <= clock.now }) == true
        else {
            drain()
            grant()
            end()
            return
        }
    }

    func tearDown() {
        drain()
        if let observer { engine?.closeClient(observer) }
        observer = nil
        owner = nil
        engine = nil
    }
}
