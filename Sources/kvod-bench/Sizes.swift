/// How big each scenario is. ``standard`` is what docs/PERFORMANCE.md
/// reports; ``tiny`` only proves in CI that every scenario still runs.
struct Sizes: Sendable {
    var setConnections: Int
    var setPipeline: Int
    var fanoutObservers: [Int]
    var fanoutPipeline: Int
    /// Observers of the fan-out whose setter is not held back by lagging observers.
    var flatOutObservers: [Int]
    /// The most one read takes from one of its observer connections.
    var observerReadBytes = 256 * 1024
    /// Observers of the fan-out whose observers are KVOClient processes.
    var kvoclientObservers: Int
    var latencyObservers: Int
    var latencyRate: Double
    var manyKeysObservers: Int
    var manyKeysPerObserver: Int
    var manyKeysKeySpace: Int
    var memoryConnections: Int
    var memoryPerConnection: Int
    /// The durability scenario's loads: pipelined, and latency-bound (one set in flight per connection).
    var durabilityShapes: [SetShape]
    /// Its measurement window, shorter than the others' to keep scripts/bench.sh
    /// under 10 minutes: it has 6 loads per peer where set-throughput has one.
    var durabilitySeconds: Double
    var warmupSeconds: Double
    var durationSeconds: Double
    /// The paced latency run's measurement window. Longer than the others':
    /// its p99 is set by a few scheduling stalls of several milliseconds
    /// each, and over 3 s one stall more or less moved it by 2× between
    /// rounds of the same server; over 10 s the rounds agree.
    var latencySeconds: Double

    static let standard = Sizes(
        setConnections: 4, setPipeline: 64,
        fanoutObservers: [1, 10, 100, 1000], fanoutPipeline: 64, flatOutObservers: [100, 1000], kvoclientObservers: 10,
        latencyObservers: 100, latencyRate: 20_000,
        manyKeysObservers: 100, manyKeysPerObserver: 1000, manyKeysKeySpace: 10_000,
        memoryConnections: 10_000, memoryPerConnection: 100,
        durabilityShapes: [SetShape(connections: 4, pipeline: 64), SetShape(connections: 50, pipeline: 1)],
        durabilitySeconds: 1,
        warmupSeconds: 0.5, durationSeconds: 2, latencySeconds: 10)

    static let tiny = Sizes(
        setConnections: 2, setPipeline: 4,
        fanoutObservers: [1, 3], fanoutPipeline: 4, flatOutObservers: [3], kvoclientObservers: 2,
        latencyObservers: 3, latencyRate: 1_000,
        manyKeysObservers: 3, manyKeysPerObserver: 20, manyKeysKeySpace: 40,
        memoryConnections: 10, memoryPerConnection: 10,
        durabilityShapes: [SetShape(connections: 2, pipeline: 4), SetShape(connections: 3, pipeline: 1)],
        durabilitySeconds: 0.3,
        warmupSeconds: 0.1, durationSeconds: 0.3, latencySeconds: 0.5)
}

/// C setter connections, each keeping up to P sets unanswered.
struct SetShape: Sendable, Hashable {
    var connections: Int
    var pipeline: Int

    /// `4 conn × 64 pipelined`, `50 conn × 1 in flight`.
    var description: String {
        "\(connections) conn × \(pipeline) \(pipeline == 1 ? "in flight" : "pipelined")"
    }
}
