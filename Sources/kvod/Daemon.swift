#if canImport(Glibc)
import Glibc
#endif
import KVOEngine
import Logging

/// The running daemon: one libuv loop on one thread, the listening socket,
/// the connections and the engine they share.
///
/// Output is batched as Redis's `beforeSleep` does: engine calls only append
/// to a client's output and put the connection on ``flushQueue``; a prepare
/// hook writes every queued connection once per loop iteration, so many
/// events to one client leave in one write.
///
/// Shutdown (SIGTERM, SIGINT) follows a flag-then-act order: stop accepting,
/// remove the socket file, flush and close every connection, and when the
/// last one is gone close the loop's own handles so `run` returns. Queued
/// output gets ``DaemonConfiguration/shutdownGraceMilliseconds``; a second
/// signal or the end of the grace period closes what is left at once.
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
    private let loop: UVLoop
    private var server: UVPipeServer?
    private var connections: [Int: ClientConnection] = [:]
    private var flushQueue: [ClientConnection] = []
    private var beforeSleep: UVPrepare?
    private var signals: [UVSignal] = []
    private var graceTimer: UVTimer?
    private(set) var state = State.starting {
        didSet { logger.debug("daemon state \(oldValue) → \(state)") }
    }

    /// Clients beyond this many are refused (resolved in `run`).
    private var maxConnections = Int.max
    private var refusals = RefusalLog()

    init(configuration: DaemonConfiguration, logger: Logger, engine: Engine? = nil) throws(DaemonError) {
        self.configuration = configuration
        self.logger = logger
        self.engine = engine ?? Engine(configuration: EngineConfiguration(accessPolicy: configuration.accessPolicy))
        do {
            self.loop = try UVLoop()
        } catch {
            throw .cannotListen("cannot start the event loop: \(error)")
        }
    }

    /// Listens and serves until a shutdown signal has been handled.
    func run() throws(DaemonError) {
        UVSignal.ignoreSIGPIPE()
        UVSignal.unblock([SIGTERM, SIGINT])
        let openFiles = DescriptorLimit.raiseSoftToHard()
        maxConnections = configuration.maxConnections ?? DescriptorLimit.defaultMaxConnections(softLimit: openFiles)
        try listen()
        let prepare = UVPrepare(loop: loop)
        prepare.start { [unowned self] in self.flushQueued() }
        beforeSleep = prepare
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            let signal = UVSignal(loop: loop)
            do {
                try signal.start(signal: number) { [unowned self] in self.receivedShutdownSignal(name) }
            } catch {
                throw .cannotListen("cannot watch \(name): \(error)")
            }
            signals.append(signal)
        }
        state = .running
        logger.info("kvod \(engine.configuration.version) listening on \(configuration.socketPath)")
        logger.info("serving at most \(maxConnections) connections (open-file limit \(openFiles))")
        if configuration.accessPolicy == nil {
            logger.info("no --policy: every client that can open the socket may read and write everything")
        }
        loop.run()
        // Anything still open (a connection past its grace period) closes now.
        loop.closeAllHandles()
        loop.run()
        do {
            try loop.close()
        } catch {
            logger.warning("event loop did not close cleanly: \(error)")
        }
        logger.info("kvod stopped")
    }

    private func listen() throws(DaemonError) {
        let path = configuration.socketPath
        try SocketFile.prepare(path)
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
        guard connections.count < maxConnections else { return refuse(stream) }
        let connection = ClientConnection(stream: stream, daemon: self)
        connections[connection.controller.id] = connection
        logger.info("client #\(connection.controller.id) connected (\(connection.peer))")
        connection.start()
    }

    /// Tells a client over `--max-connections` why, then closes it.
    private func refuse(_ stream: UVStream) {
        let message = "kvod serves at most \(maxConnections) connections; try again later"
        stream.write(Engine.refusal(KVOEngineError(.limitExceeded, message)))
        stream.shutdownThenClose()
        if let unlogged = refusals.record(now: loop.now) {
            logger.warning("refused a client: \(message)\(RefusalLog.suffix(unlogged: unlogged))")
        }
    }

    /// The loop's clock, in milliseconds.
    var loopNow: UInt64 { loop.now }

    func scheduleFlush(_ connection: ClientConnection) {
        guard !connection.isScheduledForFlush else { return }
        connection.isScheduledForFlush = true
        flushQueue.append(connection)
    }

    private func flushQueued() {
        guard !flushQueue.isEmpty else { return }
        let queue = flushQueue
        flushQueue.removeAll(keepingCapacity: true)
        for connection in queue {
            connection.isScheduledForFlush = false
            connection.flush()
        }
    }

    /// Called from a connection's close callback: its socket is gone.
    func connectionClosed(_ connection: ClientConnection) {
        connections[connection.controller.id] = nil
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
        // libuv unlinks the socket file when the bound server closes.
        server?.close()
        server = nil
        let timer = UVTimer(loop: loop)
        timer.start(afterMilliseconds: configuration.shutdownGraceMilliseconds) { [unowned self] in
            self.logger.warning("shutdown grace period over; closing what is left")
            self.finishShutdown()
        }
        graceTimer = timer
        for connection in Array(connections.values) { connection.close(flush: true) }
        if connections.isEmpty { finishShutdown() }
    }

    /// Closes the loop's own handles; `run` returns once the connections' are closed too.
    private func finishShutdown() {
        guard state != .stopped else { return }
        state = .stopped
        beforeSleep?.close()
        beforeSleep = nil
        graceTimer?.close()
        graceTimer = nil
        for signal in signals { signal.close() }
        signals = []
        loop.stop()
    }
}
