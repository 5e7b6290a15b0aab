import Glibc
import KVOEngine
import KVOProtocol
import KVOValues
import Prometheus

/// kvod's metrics, in a Prometheus registry of the daemon's own, which the
/// `metrics` op renders (docs/OPERATIONS.md lists them), each family with its
/// `# HELP`. Most figures are kept anyway for `info` (the engine's counts,
/// the loop's lag, the connections' queues): they are copied into gauges and
/// counters when the text is asked for, so serving requests records nothing.
/// The fsync and loop-turn histograms are recorded as they happen (the fsync
/// one by the storage threads; its histogram locks). Loop-confined otherwise.
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
        /// Bytes read from and written to clients since start.
        var receivedBytes = 0
        var sentBytes = 0
        /// kvod.db and its -wal file, with `--data-dir`.
        var dataDirectoryBytes: Int?
        /// The backups' copies kept for their clients, in bytes.
        var backupHeldBytes = 0
        /// Over etcd: the replica's `info` (docs/CLUSTER.md).
        var cluster: JSONObject?
    }

    private let registry = PrometheusCollectorRegistry()
    /// How long each sync to the disk took; recorded by the storage threads.
    let fsync: DurationHistogram
    /// How long each turn of the event loop worked (wall time less its wait
    /// for I/O): what any request waited behind, at most. Recorded every turn,
    /// so kept as plain counts on the loop.
    private var loopTurns = LoopHistogram(
        name: "kvod_loop_turn_duration_seconds",
        help: "How long each turn of the event loop worked (wall time, less its wait for I/O): at most what a request waited behind others.",
        // Most turns take microseconds; issue 33 bounds them at 50 ms.
        bounds: [50_000, 200_000, 1_000_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 500_000_000])
    private let startedAt = Glibc.time(nil)

    private let connections, observations, objects, seq, oldestSeq, historyChanges, historyBytes: Gauge
    private let memoryBytes, memoryLimitBytes, clientMemoryBytes, clientMemoryLimitBytes: Gauge
    private let queuedBytes, congested, heldEvents: Gauge
    private let loopLag, loopLagMax, loopLagPeak: Gauge
    private let uptime, startTime, residentBytes, openDescriptors, dataDirectoryBytes: Gauge
    /// The data directory's room to write (docs/DURABILITY.md, "A full disk"); 0 without one.
    private let storageFull, storageAvailableBytes, backupHeldBytes: Gauge
    /// Over `--etcd` only: made at the first scrape that has the replica's figures.
    private var cluster: (stale: Gauge, lag: Gauge, appliedRevision: Gauge)?
    private let cpuSeconds: Counter
    private var reportedCPUTicks = 0
    private var accepted, heapTrims, receivedBytes, sentBytes: MirroredCounter
    private var requests: [(op: String, counter: MirroredCounter)]
    private var invalidRequests: MirroredCounter
    private var events: [(kind: ChangeKind, counter: MirroredCounter)]
    private var coalesced, dropped: MirroredCounter
    private var refusedConnections, refusedPerUID, refusedObservations, refusedMemory, refusedStorage: MirroredCounter

    init(version: String, commit: String) {
        let registry = registry
        // Syncs take from tens of microseconds (a cached disk) to a second (a stalled one).
        fsync = registry.makeDurationHistogram(descriptor: Self.describe("kvod_fsync_duration_seconds", "How long each sync of the data directory's log to the disk took."), buckets: [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .seconds(1),
        ])
        func gauge(_ name: String, _ help: String) -> Gauge { registry.makeGauge(descriptor: Self.describe(name, help)) }
        func counter(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> MirroredCounter {
            MirroredCounter(labels.isEmpty ? registry.makeCounter(descriptor: Self.describe(name, help))
                                           : registry.makeCounter(descriptor: Self.describe(name, help), labels: labels))
        }
        registry.makeGauge(descriptor: Self.describe("kvod_build_info", "Always 1; its labels are the version and commit kvod reports (kvod --version)."),
                           labels: [("version", version), ("commit", commit)]).set(Int64(1))
        connections = gauge("kvod_connections", "Clients connected now.")
        observations = gauge("kvod_observations", "Observations registered now, over every client.")
        objects = gauge("kvod_objects", "Objects in the store.")
        seq = gauge("kvod_seq", "The seq of the last change.")
        oldestSeq = gauge("kvod_history_oldest_seq", "The oldest seq a since replay can start after.")
        historyChanges = gauge("kvod_history_changes", "Changes kept for since replays.")
        historyBytes = gauge("kvod_history_bytes", "Bytes of the changes kept for since replays.")
        memoryBytes = gauge("kvod_memory_bytes", "kvod's memory account (info's memory.total), what --max-memory bounds.")
        memoryLimitBytes = gauge("kvod_memory_limit_bytes", "--max-memory; 0: none.")
        clientMemoryBytes = gauge("kvod_client_memory_bytes",
                                  "Output and held events waiting for all clients together (info's clientMemory.total).")
        clientMemoryLimitBytes = gauge("kvod_client_memory_limit_bytes", "--max-client-memory.")
        queuedBytes = gauge("kvod_output_queued_bytes", "Bytes of replies and events waiting for clients in kvod's buffers.")
        congested = gauge("kvod_congested_connections", "Clients not keeping up now: their events are held or coalesced.")
        heldEvents = gauge("kvod_held_events", "Events held for clients that are not keeping up.")
        loopLag = gauge("kvod_loop_lag_seconds", "How long the event loop's last turn worked.")
        loopLagMax = gauge("kvod_loop_lag_max_seconds", "The event loop's longest turn since the previous scrape.")
        loopLagPeak = gauge("kvod_loop_lag_peak_seconds", "The event loop's longest turn since start.")
        uptime = gauge("kvod_uptime_seconds", "Seconds since kvod started.")
        startTime = gauge("process_start_time_seconds", "When kvod started, in seconds since the Unix epoch.")
        residentBytes = gauge("process_resident_memory_bytes", "kvod's resident memory (RSS).")
        openDescriptors = gauge("process_open_fds", "File descriptors kvod has open.")
        cpuSeconds = registry.makeCounter(descriptor: Self.describe("process_cpu_seconds_total",
                                                                    "CPU time kvod used, user and system, in seconds."))
        dataDirectoryBytes = gauge("kvod_data_dir_bytes", "Bytes of kvod.db and its -wal file in --data-dir; 0 without one.")
        storageFull = gauge("kvod_storage_full", "1 while the data directory's disk is full and writes that add data are refused (storage_full), else 0.")
        storageAvailableBytes = gauge("kvod_storage_available_bytes", "Bytes the data directory's file system has available to kvod; 0 without --data-dir.")
        backupHeldBytes = gauge("kvod_backup_held_bytes", "Bytes of the backups' copies kept on the data directory's disk until their clients read them to the end or close (unlinked: du does not see them).")
        accepted = counter("kvod_connections_accepted_total", "Clients accepted since start.")
        heapTrims = counter("kvod_heap_trims_total", "Times freed heap pages were given back to the kernel.")
        receivedBytes = counter("kvod_received_bytes_total", "Bytes read from clients.")
        sentBytes = counter("kvod_sent_bytes_total", "Bytes of replies and events written to clients.")
        requests = Op.allCases.map(\.rawValue).map {
            ($0, counter("kvod_requests_total", "Requests answered, by op.", [("op", $0)]))
        }
        invalidRequests = counter("kvod_invalid_requests_total", "Lines that were not a valid request (bad_json, bad_request, too_large…).")
        events = [ChangeKind.setting, .insertion, .removal, .replacement].map {
            ($0, counter("kvod_events_total", "Change events sent, by kind.", [("kind", $0.rawValue)]))
        }
        coalesced = counter("kvod_events_coalesced_total", "Events folded into a later one for clients that were not keeping up.")
        dropped = counter("kvod_events_dropped_total", "Held events dropped with an object that came and went while its client was behind.")
        let refused = "Requests and connections refused by a limit, by limit."
        refusedConnections = counter("kvod_refused_total", refused, [("limit", "connections")])
        refusedPerUID = counter("kvod_refused_total", refused, [("limit", "connections_per_uid")])
        refusedObservations = counter("kvod_refused_total", refused, [("limit", "observations")])
        refusedMemory = counter("kvod_refused_total", refused, [("limit", "memory")])
        refusedStorage = counter("kvod_refused_total", refused, [("limit", "storage")])
        startTime.record(Int(startedAt))
    }

    private func makeClusterGauges() -> (stale: Gauge, lag: Gauge, appliedRevision: Gauge) {
        let gauges = (
            stale: registry.makeGauge(descriptor: Self.describe(
                "kvod_cluster_stale", "Over --etcd: 1 while this kvod may be behind etcd (reads say stale), else 0.")),
            lag: registry.makeGauge(descriptor: Self.describe(
                "kvod_cluster_lag_revisions", "Over --etcd: etcd revisions not yet applied here.")),
            appliedRevision: registry.makeGauge(descriptor: Self.describe(
                "kvod_cluster_applied_revision", "Over --etcd: the last etcd revision applied here."))
        )
        cluster = gauges
        return gauges
    }

    private static func integer(_ value: JSONValue?) -> Int {
        if case .number(let number)? = value { return number.intValue ?? 0 }
        return 0
    }

    /// A family's name and `# HELP` text.
    private static func describe(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// Notes one finished turn of the loop that worked `microseconds`.
    func recordLoopTurn(microseconds: UInt64) {
        loopTurns.record(nanoseconds: microseconds &* 1000)
    }

    /// Brings every metric up to date with `engine` and `daemon`, then
    /// renders them in Prometheus's text format.
    func render(engine: Engine, daemon: DaemonFigures) -> String {
        update(from: engine, daemon)
        updateProcess()
        var text: [UInt8] = []
        registry.emit(into: &text)
        return String(decoding: text, as: UTF8.self) + loopTurns.text()
    }

    private func update(from engine: Engine, _ daemon: DaemonFigures) {
        connections.record(engine.clientCount)
        observations.record(engine.shared.observationCount)
        objects.record(engine.store.objectCount)
        seq.record(Int(engine.store.seq))
        oldestSeq.record(Int(engine.oldestSeqHeld))
        historyChanges.record(engine.history.count)
        historyBytes.record(engine.history.bytes)
        memoryBytes.record(engine.memoryEstimate)
        memoryLimitBytes.record(engine.configuration.maxMemory)
        let statistics = engine.daemonStatistics
        clientMemoryBytes.record(statistics.clientMemoryBytes)
        clientMemoryLimitBytes.record(statistics.clientMemoryLimitBytes)
        queuedBytes.record(daemon.queuedBytes)
        congested.record(daemon.congested)
        heldEvents.record(daemon.heldEvents)
        loopLag.record(Double(statistics.loopLagLastMicroseconds) / 1e6)
        loopLagMax.record(Double(statistics.loopLagScrapeMaxMicroseconds) / 1e6)
        loopLagPeak.record(Double(statistics.loopLagPeakMicroseconds) / 1e6)
        engine.daemonStatistics.loopLagScrapeMaxMicroseconds = 0
        dataDirectoryBytes.record(daemon.dataDirectoryBytes ?? 0)
        let storage = engine.storageStatus?()
        storageFull.record(storage?.full == true ? 1 : 0)
        storageAvailableBytes.record(storage?.availableBytes ?? 0)
        backupHeldBytes.record(daemon.backupHeldBytes)
        if let figures = daemon.cluster {
            let gauges = cluster ?? makeClusterGauges()
            gauges.stale.record(figures[InfoFigure.Cluster.stale] == .bool(true) ? 1 : 0)
            gauges.lag.record(Self.integer(figures[InfoFigure.Cluster.lag]))
            gauges.appliedRevision.record(Self.integer(figures[InfoFigure.Cluster.appliedRevision]))
        }
        accepted.follow(daemon.accepted)
        heapTrims.follow(daemon.heapTrims)
        receivedBytes.follow(daemon.receivedBytes)
        sentBytes.follow(daemon.sentBytes)
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

    /// The process's figures, from /proc/self (what Prometheus's own
    /// clients call `process_*`).
    private func updateProcess() {
        uptime.record(Int(Glibc.time(nil) - startedAt))
        if let status = ProcessFigures.read() {
            residentBytes.record(status.residentBytes)
            if status.cpuTicks > reportedCPUTicks {
                cpuSeconds.increment(by: Double(status.cpuTicks - reportedCPUTicks) / Double(ProcessFigures.ticksPerSecond))
                reportedCPUTicks = status.cpuTicks
            }
        }
        openDescriptors.record(ProcessFigures.openDescriptors())
    }
}

extension Gauge {
    /// Sets an integer figure.
    func record(_ value: Int) {
        set(Int64(value))
    }
}
