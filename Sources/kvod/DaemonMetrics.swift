import CoreMetrics
import KVOEngine
import Prometheus

/// kvod's metrics, recorded through swift-metrics into a Prometheus registry
/// of the daemon's own, which the `metrics` op renders (docs/OPERATIONS.md
/// lists them). Most figures are kept anyway for `info` (the engine's counts,
/// the loop's lag, the connections' queues): they are copied into gauges and
/// counters when the text is asked for, so serving requests records nothing.
/// The fsync timer is recorded by the storage threads (its handler locks).
/// Loop-confined otherwise.
final class DaemonMetrics {
    /// What the daemon itself knows when scraped (its connections, its heap).
    struct DaemonFigures {
        var accepted = 0
        /// Times freed heap pages were given back to the kernel.
        var heapTrims = 0
        /// Bytes of replies and events waiting for clients, in kvod's buffers.
        var queuedBytes = 0
        var congested = 0
        /// Events (and cursors of initial events) held for congested clients.
        var heldEvents = 0
    }

    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// How long each sync to the disk took; recorded by the storage threads.
    let fsync: CoreMetrics.Timer

    private let connections, observations, objects, seq, oldestSeq, historyChanges, historyBytes: CoreMetrics.Gauge
    private let memoryBytes, memoryLimitBytes, queuedBytes, congested, heldEvents: CoreMetrics.Gauge
    private let loopLag, loopLagMax, loopLagPeak: CoreMetrics.Gauge
    /// The data directory's room to write (docs/DURABILITY.md, "A full disk"); 0 without one.
    private let storageFull, storageAvailableBytes: CoreMetrics.Gauge
    private var accepted, heapTrims: MirroredCounter
    private var requests: [(op: String, counter: MirroredCounter)]
    private var invalidRequests: MirroredCounter
    private var events: [(kind: ChangeKind, counter: MirroredCounter)]
    private var coalesced, dropped: MirroredCounter
    private var refusedConnections, refusedPerUID, refusedObservations, refusedMemory, refusedStorage: MirroredCounter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Syncs take from tens of microseconds (a cached disk) to a second (a stalled one).
        factory.durationHistogramBuckets["kvod_fsync_duration_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .seconds(1),
        ]
        self.factory = factory
        fsync = CoreMetrics.Timer(label: "kvod_fsync_duration_seconds", factory: factory)
        func gauge(_ name: String) -> CoreMetrics.Gauge { CoreMetrics.Gauge(label: name, factory: factory) }
        func counter(_ name: String, _ dimensions: [(String, String)] = []) -> MirroredCounter {
            MirroredCounter(CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory))
        }
        connections = gauge("kvod_connections")
        observations = gauge("kvod_observations")
        objects = gauge("kvod_objects")
        seq = gauge("kvod_seq")
        oldestSeq = gauge("kvod_history_oldest_seq")
        historyChanges = gauge("kvod_history_changes")
        historyBytes = gauge("kvod_history_bytes")
        memoryBytes = gauge("kvod_memory_bytes")
        memoryLimitBytes = gauge("kvod_memory_limit_bytes")
        queuedBytes = gauge("kvod_output_queued_bytes")
        congested = gauge("kvod_congested_connections")
        heldEvents = gauge("kvod_held_events")
        loopLag = gauge("kvod_loop_lag_seconds")
        loopLagMax = gauge("kvod_loop_lag_max_seconds")
        loopLagPeak = gauge("kvod_loop_lag_peak_seconds")
        storageFull = gauge("kvod_storage_full")
        storageAvailableBytes = gauge("kvod_storage_available_bytes")
        accepted = counter("kvod_connections_accepted_total")
        heapTrims = counter("kvod_heap_trims_total")
        requests = Operation.names.map { ($0, counter("kvod_requests_total", [("op", $0)])) }
        invalidRequests = counter("kvod_invalid_requests_total")
        events = [ChangeKind.setting, .insertion, .removal, .replacement].map {
            ($0, counter("kvod_events_total", [("kind", $0.rawValue)]))
        }
        coalesced = counter("kvod_events_coalesced_total")
        dropped = counter("kvod_events_dropped_total")
        refusedConnections = counter("kvod_refused_total", [("limit", "connections")])
        refusedPerUID = counter("kvod_refused_total", [("limit", "connections_per_uid")])
        refusedObservations = counter("kvod_refused_total", [("limit", "observations")])
        refusedMemory = counter("kvod_refused_total", [("limit", "memory")])
        refusedStorage = counter("kvod_refused_total", [("limit", "storage")])
    }

    /// Brings every metric up to date with `engine` and `daemon`, then
    /// renders them in Prometheus's text format.
    func render(engine: Engine, daemon: DaemonFigures) -> String {
        update(from: engine, daemon)
        var text: [UInt8] = []
        registry.emit(into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    private func update(from engine: Engine, _ daemon: DaemonFigures) {
        connections.record(engine.clientCount)
        observations.record(engine.shared.observationCount)
        objects.record(engine.store.objectCount)
        seq.record(engine.store.seq)
        oldestSeq.record(engine.oldestSeqHeld)
        historyChanges.record(engine.history.count)
        historyBytes.record(engine.history.bytes)
        memoryBytes.record(engine.memoryEstimate)
        memoryLimitBytes.record(engine.configuration.maxMemory)
        queuedBytes.record(daemon.queuedBytes)
        congested.record(daemon.congested)
        heldEvents.record(daemon.heldEvents)
        let statistics = engine.daemonStatistics
        loopLag.record(Double(statistics.loopLagLastMicroseconds) / 1e6)
        loopLagMax.record(Double(statistics.loopLagScrapeMaxMicroseconds) / 1e6)
        loopLagPeak.record(Double(statistics.loopLagPeakMicroseconds) / 1e6)
        engine.daemonStatistics.loopLagScrapeMaxMicroseconds = 0
        let storage = engine.storageStatus?()
        storageFull.record(storage?.full == true ? 1 : 0)
        storageAvailableBytes.record(storage?.availableBytes ?? 0)
        accepted.follow(daemon.accepted)
        heapTrims.follow(daemon.heapTrims)
        for index in requests.indices {
            requests[index].counter.follow(engine.requestCounts.count(of: requests[index].op))
        }
        invalidRequests.follow(engine.requestCounts.invalid)
        let counts = engine.shared.eventCounts
        for index in events.indices { events[index].counter.follow(counts[events[index].kind]) }
        coalesced.follow(counts.coalesced)
        dropped.follow(counts.dropped)
        refusedConnections.follow(statistics.refusedConnections)
        refusedPerUID.follow(statistics.refusedConnectionsPerUID)
        refusedObservations.follow(engine.refusals.observations)
        refusedMemory.follow(engine.refusals.memory)
        refusedStorage.follow(engine.refusals.storage)
    }
}

extension CoreMetrics.Timer {
    /// Records a `Duration` in nanoseconds.
    func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
