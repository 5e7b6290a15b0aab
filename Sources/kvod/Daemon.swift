#if canImport(Glibc)
import Glibc
#endif
import KVOBuildInfo
import KVOCluster
import KVODCore
import KVOEngine
import KVOProtocol
import KVOStorage
import Logging

/// The running daemon: one libuv loop on one thread, the listening socket,
/// the connections and the engine they share.
///
/// Output is batched as Redis's `beforeSleep` does: engine calls only append
/// to a client's output and put the connection on ``ConnectionHost/flushQueue``; a prepare
/// hook writes every queued connection once per loop iteration, so many
/// events to one client leave in one write.
///
/// With a data directory, the prepare hook first submits the iteration's
/// changes to the storage writer (``GroupCommit``); output that reports them
/// is held until the writer wakes the loop to say they are committed.
///
/// Shutdown (SIGTERM, SIGINT) follows a flag-then-act order: stop accepting,
/// remove the socket file (only one kvod bound itself: a socket systemd
/// passed stays, systemd owns it), flush and close every connection, and
/// when the last one is gone close the loop's own handles so `run` returns.
/// Queued output gets ``DaemonConfiguration/shutdownGraceMilliseconds``; a
/// second signal or the end of the grace period closes what is left at once.
///
/// Under systemd a ``SystemdReporter`` reports `READY=1` once the socket
/// listens, a `STATUS=` line, watchdog pings and `STOPPING=1`.
final class Daemon {
    enum State {
        /// Binding the socket.
        case starting
        /// Accepting and serving clients.
        case running
        /// A signal came: no new clients, the current ones are being closed.
        case draining
        /// Everything is closed; the loop is finishing.
        case stopped
    }

    let configuration: DaemonConfiguration
    let logger: Logger
    let engine: Engine
    let loop: UVLoop
    /// All a connection reaches of the daemon.
    let host: ConnectionHost
    private var server: UVPipeServer?
    private(set) var connections: [Int: ClientConnection] = [:]
    /// Clients accepted since start (refused ones not included), for `metrics`.
    private(set) var acceptedConnections = 0
    /// What the `metrics` op reports.
    let metrics = DaemonMetrics(version: BuildInfo.version, commit: BuildInfo.commit)
    /// The queue a pass of `flushQueued` works through, swapped with the
    /// host's `flushQueue`: neither is reallocated from turn to turn.
    private var flushing: [ClientConnection] = []
    /// Gives freed pages back after a flush pass that freed a lot (see ClientConnection.flush).
    private(set) var heapTrim: HeapTrim?
    /// Connections at `debug`, and at `info` only a few lines per interval.
    private var connectionLog: ConnectionLogSummary?
    private var beforeSleep: UVPrepare?
    /// Deletes ephemeral values whose owner left and values whose ttl passed.
    private var leaseTimer: DeadlineTimer?
    /// Disconnects clients that hold the client budget unread while others wait for room.
    private var clientMemoryEviction: ClientMemoryEviction?
    /// Ends throttled observations' intervals.
    private var throttleTimer: DeadlineTimer?
    /// Does long requests' work a slice per turn.
    private var slicedWork: SlicedWork?
    /// Times out writers' waits (`await`).
    private var awaitTimer: DeadlineTimer?
    private var signals: [UVSignal] = []
    private var graceTimer: UVTimer?
    private var reporter: SystemdReporter?
    /// With a data directory: the loop's side of group commit, the writer
    /// thread, and the handle the writer wakes the loop with.
    var storage: (groupCommit: GroupCommit, writer: StorageWriter, wakeup: UVAsync)? {
        didSet { host.groupCommit = storage?.groupCommit }
    }
    /// With a data directory: the snapshots `backup` asks for.
    var backups: Backups?
    /// Over etcd (`--etcd`): the replica that proposes changes and follows the cluster.
    var cluster: EtcdReplica?
    /// Its etcd client's sockets and timer on the loop.
    var etcdDriver: UVEtcdDriver?
    /// With `--http`: the HTTP door.
    private var http: HTTPGateway?
    /// How long each of its proposals took to its outcome, by outcome (metrics: failures are the outcomes but `applied`).
    var clusterCommitDurations = LoopHistogram(
        name: "kvod_cluster_commit_duration_seconds",
        help: "Over --etcd: how long each proposal took from kvod's Txn to its outcome told to the client (applied here, or the failure), by outcome.",
        labelName: "outcome", labels: ProposalOutcome.metricNames)
    /// Set when a commit failed: the daemon stops and exits non-zero.
    var storageFailure: String?
    /// The data directory's room to write, as the daemon last heard of it (Daemon+StorageSpace.swift).
    var storageSeen = StorageStatus()
    private(set) var state = State.starting {
        didSet { logger.debug("daemon state \(oldValue) → \(state)") }
    }

    /// Clients beyond this many are refused (resolved in `run`).
    private(set) var maxConnections = Int.max
    /// Clients of one uid beyond its limit are refused (resolved in `run`).
    private var connectionsPerUID = ConnectionsPerUID(limit: Int.max, exempt: [])
    private var refusals = RefusalLog()
    /// Times the loop's turns for `info`'s loop lag.
    private var lagMeter: LoopLagMeter?

    init(configuration: DaemonConfiguration, logger: Logger) throws(DaemonError) {
        self.configuration = configuration
        self.logger = logger
        self.engine = Engine(configuration: EngineConfiguration(
            version: BuildInfo.version, commit: BuildInfo.commit,
            maxObservationsPerClient: configuration.maxObservationsPerConnection,
            historyCapacity: configuration.historyCapacity, historyBytes: configuration.historyBytes,
            maxMemory: configuration.maxMemory, accessPolicy: configuration.accessPolicy))
        do {
            self.loop = try UVLoop()
        } catch {
            throw .cannotListen("cannot start the event loop: \(error)")
        }
        host = ConnectionHost(configuration: configuration, engine: self.engine, logger: logger, loop: loop)
        self.engine.metricsText = { [unowned self] in self.metricsText() }
        host.connectionClosed = { [unowned self] in self.connectionClosed($0) }
        host.clientClosed = { [unowned self] in
            self.cluster?.clientClosed($0.id)
            self.backups?.clientClosed($0)
        }
    }

    /// Listens and serves until a shutdown signal has been handled.
    func run() throws(DaemonError) {
        UVSignal.ignoreSIGPIPE()
        // Signals first: once clients (or tests) can connect, SIGTERM and
        // SIGHUP must already mean what kvod says they mean.
        try watchSignals()
        let openFiles = DescriptorLimit.raiseSoftToHard()
        maxConnections = configuration.maxConnections ?? DescriptorLimit.defaultMaxConnections(softLimit: openFiles)
        connectionsPerUID = ConnectionsPerUID(
            limit: configuration.maxConnectionsPerUID ?? ConnectionsPerUID.defaultLimit(maxConnections: maxConnections),
            exempt: [0, getuid()])
        // State before the socket: no client may see the store before it is restored.
        try openStorage()
        try openCluster()
        // A signal while the replica caught up has stopped kvod already.
        guard state == .starting else { return try closeLoop() }
        do {
            try listen()
            try listenHTTP()
        } catch {
            stopStorage()
            closeCluster()
            throw error
        }
        let engine = self.engine, engineClock = engine.configuration.throttleClock
        let host = self.host, timed: (StaticString, () -> Void) -> Void = { host.timed($0, $1) }
        // Ephemeral values whose owner left and values whose ttl passed: at once while deletions are
        // queued (a pass makes at most 500), else at the next deadline, at most a second away (a
        // deadline moves when a value is renewed: a late look costs nothing).
        let loop = self.loop
        leaseTimer = DeadlineTimer(loop: loop, clock: { loop.now }, nextDeadline: { [unowned engine] in
            if engine.hasPendingReleases { return loop.now }
            return engine.nextLeaseDeadline.map { loop.now + UInt64((max(0, min(1, $0 - wallClockNow())) * 1000).rounded(.up)) }
        }, reached: { _ in host.timed("leased values released") { _ = engine.releaseDueValues() } })
        throttleTimer = DeadlineTimer(loop: loop, clock: engineClock,
                                      nextDeadline: { [unowned engine] in engine.nextThrottleDeadline },
                                      reached: { at in
                                          host.timed("throttled events") { engine.releaseThrottledEvents(at: at) }
                                      })
        host.turnYield = TurnYield(loop: loop)
        clientMemoryEviction = ClientMemoryEviction(loop: loop, host: host,
                                                    patienceMilliseconds: configuration.outputLimits.softMilliseconds,
                                                    connections: { [unowned self] in self.connections.values })
        slicedWork = SlicedWork(engine: engine, loop: loop, timed: timed)
        heapTrim = HeapTrim(loop: loop)
        connectionLog = ConnectionLogSummary(loop: loop, logger: logger,
                                             intervalSeconds: configuration.connectionLogSeconds,
                                             openConnections: { [unowned self] in self.connections.count })
        awaitTimer = DeadlineTimer(loop: loop, clock: engineClock,
                                   nextDeadline: { [unowned engine] in engine.nextAwaitDeadline },
                                   reached: { at in
                                       host.timed("awaits expired") { engine.expireAwaits(at: at) }
                                   })
        let prepare = UVPrepare(loop: loop)
        prepare.start { [unowned self] in
            self.flushQueued()
            self.lagMeter?.turnEnded()
        }
        beforeSleep = prepare
        do {
            lagMeter = try LoopLagMeter(loop: loop) { [unowned self] wall, cpu in
                self.engine.daemonStatistics.recordLoopTurn(microseconds: wall, cpuMicroseconds: cpu)
                self.metrics.recordLoopTurn(microseconds: wall)
                if let slow = host.slowTurns.turnEnded(wallMicroseconds: wall, cpuMicroseconds: cpu, now: self.loop.now) {
                    logger.notice("\(slow)")
                }
            }
        } catch {
            logger.warning("cannot measure the event loop's lag (info reports 0): \(error)")
        }
        state = .running
        if let activated = configuration.activatedSocket {
            logger.info("kvod \(BuildInfo.description) listening on \(activated.path ?? "an unnamed socket") (passed by systemd on fd \(activated.fd))")
        } else {
            logger.info("kvod \(BuildInfo.description) listening on \(configuration.socketPath)")
        }
        logger.info("serving at most \(maxConnections) connections (open-file limit \(openFiles)), \(connectionsPerUID.limit) per uid")
        if configuration.accessPolicy == nil {
            logger.info("no --policy: every client that can open the socket may read and write everything")
        }
        if let target = configuration.notifyTarget {
            let reporter = SystemdReporter(notifier: SystemdNotifier(target: target), loop: loop, logger: logger) {
                [unowned self] in self.statusLine
            }
            reporter.ready()
            self.reporter = reporter
        }
        loop.run()
        try closeLoop()
    }

    /// Closes what is still open (a connection past its grace period) once the loop has stopped.
    private func closeLoop() throws(DaemonError) {
        loop.closeAllHandles()
        if http == nil {
            loop.run()
        } else {
            // A write H2O has in flight to a client that does not read would keep
            // the loop running for ever: turn it only until this layer's handles
            // are closed.
            var turns = 0
            while !loop.ownHandles.isEmpty, turns < 1_000 {
                loop.run(.noWait)
                turns += 1
            }
        }
        do {
            try loop.close()
        } catch {
            // With --http, H2O's connections still open at the end stay open: the process ends with them.
            if http == nil {
                logger.warning("event loop did not close cleanly: \(error)")
            } else {
                logger.debug("event loop closed with HTTP connections still open: \(error)")
            }
        }
        if let storageFailure { throw .storageFailed(storageFailure) }
        logger.info("kvod stopped")
    }

    private func watchSignals() throws(DaemonError) {
        var watched = [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")]
        if configuration.ignoresHangUp || configuration.httpTokensFile != nil { watched.append((SIGHUP, "SIGHUP")) }
        UVSignal.unblock(watched.map(\.0))
        for (number, name) in watched {
            let signal = UVSignal(loop: loop)
            do {
                try signal.start(signal: number) { [unowned self] in
                    if number == SIGHUP, self.configuration.httpTokensFile != nil {
                        self.reloadHTTPTokens()
                    } else if number == SIGHUP {
                        self.logger.notice("SIGHUP ignored: kvod has nothing to reload (its options are read at start; restart to change them)")
                    } else {
                        self.receivedShutdownSignal(name)
                    }
                }
            } catch {
                throw .cannotListen("cannot watch \(name): \(error)")
            }
            signals.append(signal)
        }
    }

    private func listen() throws(DaemonError) {
        if let activated = configuration.activatedSocket { return try adopt(activated) }
        let path = configuration.socketPath
        try SocketFile.prepare(path, isDefault: configuration.socketPathIsDefault)
        let server = UVPipeServer(loop: loop)
        do {
            try server.bind(path: path)
            try server.chmod(mode: mode_t(configuration.socketMode))
            try server.listen(backlog: 511) { [unowned self] _ in self.acceptConnection() }
            server.onAcceptError = { [unowned self] error in
                if let unlogged = self.refusals.record(now: self.loop.now) {
                    self.logger.warning("cannot accept clients: \(error); refusing them until descriptors free up\(RefusalLog.suffix(unlogged: unlogged))")
                }
            }
        } catch {
            throw .cannotListen("cannot listen on \(path): \(error)")
        }
        self.server = server
    }

    /// Serves the socket systemd passed: no `SocketFile.prepare` (the path is
    /// systemd's and is live), no bind, no chmod (`SocketMode=` decides).
    /// libuv knows no path for an adopted descriptor, so closing the server
    /// at shutdown leaves the socket file where systemd made it.
    private func adopt(_ activated: ActivatedSocket) throws(DaemonError) {
        if let path = activated.path, path != configuration.socketPath {
            logger.notice("serving the socket systemd passed, \(path); --socket \(configuration.socketPath) is not used")
        }
        let server = UVPipeServer(loop: loop)
        do {
            try server.open(fd: activated.fd)
            try server.listen(backlog: 511) { [unowned self] _ in self.acceptConnection() }
        } catch {
            server.close()
            throw .cannotListen("cannot serve the socket passed by systemd on fd \(activated.fd): \(error)")
        }
        self.server = server
    }

    private func listenHTTP() throws(DaemonError) {
        guard let endpoint = configuration.httpEndpoint else { return }
        let gateway = HTTPGateway(daemon: self, tokens: configuration.httpTokens,
                                  metricsAreOpen: configuration.httpMetricsOpen,
                                  crossOrigin: configuration.httpCORSOrigin.map(HTTPCrossOrigin.init))
        do throws(DaemonError) {
            if let tls = configuration.httpTLS {
                do {
                    try gateway.useTLS(certificateFile: tls.certificateFile, keyFile: tls.keyFile)
                } catch {
                    throw DaemonError.cannotListen("--http-cert \(tls.certificateFile), --http-key \(tls.keyFile): \(error)")
                }
            }
            do {
                try gateway.listen(endpoint)
            } catch {
                throw DaemonError.cannotListen("cannot serve HTTP on \(endpoint.host):\(endpoint.port): \(error)")
            }
        } catch {
            server?.close()
            server = nil
            throw error
        }
        http = gateway
        logger.info("serving HTTP on \(gateway.scheme)://\(gateway.address)")
    }

    /// SIGHUP with `--http-tokens`: reads the file again; a file that cannot be
    /// used leaves the tokens as they were.
    private func reloadHTTPTokens() {
        guard let file = configuration.httpTokensFile else { return }
        do {
            let tokens = try HTTPTokens(path: file.path, allowRoot: file.allowRoot)
            http?.replaceTokens(tokens)
            logger.notice("SIGHUP: read \(tokens.count) HTTP token(s) from \(file.path)")
        } catch {
            logger.error("SIGHUP: --http-tokens \(file.path) not reloaded, the tokens stay as they were: \(error)")
        }
    }

    /// Why kvod is not ready to serve its data (`/readyz`), or nil.
    var notReadyReason: String? {
        switch state {
        case .starting: return "kvod is starting"
        case .draining, .stopped: return "kvod is stopping"
        case .running: return cluster.flatMap { $0.isStale ? $0.staleness : nil }
        }
    }

    /// The `STATUS=` line `systemctl status` shows.
    var statusLine: String {
        let connections = engine.clientCount
        let observations = engine.shared.observationCount
        let waiting = storageSeen.waitingChanges
        let disk = waiting > 0 ? "; disk full: \(waiting) changes wait for room"
            : storageSeen.full ? "; disk full: writes refused" : ""
        return "Serving \(connections) connection\(connections == 1 ? "" : "s"), \(observations) observation\(observations == 1 ? "" : "s")\(disk)"
    }

    // MARK: Connections

    private func acceptConnection() {
        guard state == .running, let server else { return }
        let stream: UVStream
        do {
            stream = try server.accept()
        } catch {
            logger.warning("accept failed: \(error)")
            return
        }
        let peer = stream.peerCredentials()
        if let refusal = admissionRefusal(uid: peer?.uid) { return refuse(stream, refusal) }
        let credentials = peer.map {
            PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid, groups: stream.peerGroups())
        }
        serve(ClientConnection(stream: stream, credentials: credentials, host: host))
    }

    /// Why a new connection of `uid` is refused (`--max-connections`,
    /// `--max-connections-per-uid`), counted in `info`'s refusals; nil: admitted.
    func admissionRefusal(uid: UInt32?) -> String? {
        guard connections.count < maxConnections else {
            engine.daemonStatistics.refusedConnections += 1
            return "kvod serves at most \(maxConnections) connections (--max-connections); try again later"
        }
        if let uid, !connectionsPerUID.admits(uid) {
            engine.daemonStatistics.refusedConnectionsPerUID += 1
            return """
                kvod serves at most \(connectionsPerUID.limit) connections per uid (--max-connections-per-uid) \
                and uid \(uid) holds \(connectionsPerUID.count(of: uid)); try again later
                """
        }
        return nil
    }

    /// Serves an admitted connection, from the socket or another door (HTTP).
    func serve(_ connection: ClientConnection) {
        count(connection)
        connection.start()
    }

    /// Counts `connection` among the daemon's: its table, accepted, its uid's, the connection log.
    private func count(_ connection: ClientConnection) {
        connections[connection.controller.id] = connection
        acceptedConnections += 1
        if let uid = connection.controller.credentials?.uid { connectionsPerUID.opened(by: uid) }
        connectionLog?.connected("client #\(connection.controller.id) connected (\(connection.peer))")
    }

    /// Counts `connection` no more (closed or set aside); returns whether it was counted.
    @discardableResult
    private func uncount(_ connection: ClientConnection) -> Bool {
        guard connections.removeValue(forKey: connection.controller.id) != nil else { return false }
        _ = host.clientMemory.report(0, replacing: &connection.clientMemoryReport)
        if let uid = connection.controller.credentials?.uid { connectionsPerUID.closed(by: uid) }
        return true
    }

    /// Sets aside a connection that served its request (an HTTP request's), for
    /// the next request of its subject (``HTTPIdleConnections``), if nothing of
    /// the request is left on it: it leaves the connections, its uid's count and
    /// the engine's clients, as a closed one would. Over etcd nothing is set
    /// aside (the cluster keeps a lease per client). Returns whether it was.
    /// One set aside starts over at once, so that it keeps no buffer of its last request.
    func setAside(_ connection: ClientConnection) -> Bool {
        guard state == .running, cluster == nil, connection.isIdle, engine.setAside(connection.controller) else {
            return false
        }
        uncount(connection)
        connection.startOver()
        return true
    }

    /// Serves again a connection set aside, admitted as a new one is.
    func serveAgain(_ connection: ClientConnection) {
        engine.takeBack(connection.controller)
        count(connection)
    }

    /// Closes a connection set aside (kvod is stopping): the engine takes its
    /// client back to close it; the daemon counts it nowhere any more
    /// (``connectionClosed(_:)`` passes over it).
    func closeSetAside(_ connection: ClientConnection) {
        engine.takeBack(connection.controller)
        connection.close(flush: false)
    }

    /// Tells a client over `--max-connections` or `--max-connections-per-uid`
    /// why (`message`), then closes it.
    private func refuse(_ stream: UVStream, _ message: String) {
        stream.write(Engine.refusal(KVOEngineError(.limitExceeded, message)))
        stream.shutdownThenClose()
        if let unlogged = refusals.record(now: loop.now) {
            logger.warning("refused a client: \(message)\(RefusalLog.suffix(unlogged: unlogged))")
        }
    }

    private func flushQueued() {
        defer {
            host.turn &+= 1
            host.turnYield?.armIfWaiting()
            clientMemoryEviction?.armIfWaiting()
            slicedWork?.armIfPending()
        }
        leaseTimer?.schedule()
        throttleTimer?.schedule()
        awaitTimer?.schedule()
        var released = 0
        var written = 0
        while true {
            // Over etcd, the changes every connection pipelined this turn go
            // together, as few Txns as etcd's limits allow (docs/CLUSTER.md).
            // Each step is timed for the slow-turn log only when it has work:
            // a clock read costs more than an empty step.
            if engine.hasQueuedPipelines { host.timed("pipelines proposed") { engine.proposeQueuedPipelines() } }
            // The changes made so far go to be committed, and what is
            // committed is released: also after each pass below, whose flushes
            // may answer requests a pause had put aside. A group the loop
            // commits itself has no writer thread to wake the loop for it.
            if let groupCommit = host.groupCommit { host.timed("commit submitted") { groupCommit.submit() } }
            if !host.holdingOutput.isEmpty { host.timed("committed output released") { releaseCommitted() } }
            // Flushes and closes lower what waits for clients: held ones drain into the room.
            engine.noteClientMemory(total: host.clientMemory.outputTotal)
            if engine.hasClientsWaitingForMemory { host.timed("clients drained into room") { engine.wakeClientsWaitingForMemory() } }
            guard !host.flushQueue.isEmpty else { break }
            swap(&host.flushQueue, &flushing)
            host.timed("output flushed") {
                for connection in flushing {
                    connection.isScheduledForFlush = false
                    released += connection.flush()
                }
            }
            // Every output written before the pass is in the client budget's count now.
            engine.noteOutputsTaken()
            // A flush may give others output (a writer's awaited reply once its
            // observers' events were written): written in the next pass, not
            // after a poll that might wait for nothing.
            written += flushing.count
            flushing.removeAll(keepingCapacity: true)
        }
        guard written > 0 else { return }
        if released > 0 { host.timed("heap trim") { heapTrim?.afterReleasing(released) } }
        if host.pacing.shouldPause(afterWritingTo: written) { host.pacing.pause() }
    }

    /// Called from a connection's close callback: its socket is gone.
    func connectionClosed(_ connection: ClientConnection) {
        // One set aside was taken out already (`setAside`).
        guard uncount(connection) else { return }
        if state == .draining && connections.isEmpty { finishShutdown() }
    }

    // MARK: Shutdown

    private func receivedShutdownSignal(_ name: String) {
        switch state {
        case .starting, .running:
            logger.info("\(name): closing \(connections.count) connection(s) and stopping")
            beginShutdown()
        case .draining, .stopped:
            logger.info("\(name) again: closing at once")
            finishShutdown()
        }
    }

    private func beginShutdown() {
        state = .draining
        reporter?.stopping(status: "Stopping: closing \(connections.count) connection\(connections.count == 1 ? "" : "s")")
        // Closing a bound server unlinks its socket file if it is still the
        // one bound; an adopted one (systemd's) stays.
        server?.close()
        server = nil
        http?.stop()
        let timer = UVTimer(loop: loop)
        timer.start(afterMilliseconds: configuration.shutdownGraceMilliseconds) { [unowned self] in
            self.logger.warning("shutdown grace period over; closing what is left")
            self.finishShutdown()
        }
        graceTimer = timer
        for connection in Array(connections.values) { connection.close(flush: true) }
        if connections.isEmpty { finishShutdown() }
    }

    /// Stops without a grace period: no new clients, every connection closed
    /// without flushing its output.
    func stopAtOnce() {
        state = .draining
        server?.close()
        server = nil
        http?.stop()
        for connection in Array(connections.values) { connection.close(flush: false) }
        finishShutdown()
    }

    /// Closes the loop's own handles; `run` returns once the connections' are closed too.
    private func finishShutdown() {
        guard state != .stopped else { return }
        state = .stopped
        stopStorage()
        closeCluster()
        beforeSleep?.close()
        beforeSleep = nil
        lagMeter = nil
        leaseTimer?.close()
        leaseTimer = nil
        throttleTimer?.close()
        throttleTimer = nil
        host.turnYield?.close()
        host.turnYield = nil
        clientMemoryEviction?.close()
        clientMemoryEviction = nil
        slicedWork?.close()
        slicedWork = nil
        heapTrim?.close()
        heapTrim = nil
        connectionLog?.close()
        connectionLog = nil
        awaitTimer?.close()
        awaitTimer = nil
        graceTimer?.close()
        graceTimer = nil
        for signal in signals { signal.close() }
        signals = []
        reporter?.close()
        reporter = nil
        loop.stop()
    }
}
