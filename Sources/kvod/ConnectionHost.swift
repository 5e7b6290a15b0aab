import KVODCore
import KVOEngine
import KVOProtocol
import Logging

/// All a ``ClientConnection`` reaches of the daemon: the engine, the one
/// decoder, the loop's turn and clock, the counters, and the lists a
/// connection joins (to be flushed, to continue next turn, holding output
/// for a commit), which ``Daemon`` works through. The daemon owns it and
/// outlives every connection. Loop-confined.
final class ConnectionHost {
    let engine: Engine
    let logger: Logger
    private let loop: UVLoop
    let maxLineBytes: Int
    let outputLimits: OutputLimits
    /// Decodes every connection's lines into requests for the engine.
    var requestDecoder = RequestDecoder()
    /// How long the loop worked on each request, by op (metrics): from the start of the read that
    /// brought its line (or of the turn that took it up again after a pause) to the end of its handling.
    var requestDurations = LoopHistogram(
        name: "kvod_request_duration_seconds",
        help: "How long kvod's loop worked on each request, from the read that brought it to the end of its handling, by op (a reply that waits for etcd or observers is sent later).",
        labelName: "op", labels: Op.allCases.map(\.rawValue))
    /// Logs a turn over issue 33's bound with its longest request.
    var slowTurns: SlowTurnLog
    /// Bytes read from and written to clients since start (metrics).
    var receivedBytes = 0
    var sentBytes = 0
    /// Counts the loop's turns (each ends with the prepare hook): what a ``TurnBudget`` is per.
    var turn: UInt64 = 0
    /// Pauses the loop briefly after flushing one change to many observers.
    var pacing: FanOutPacing
    /// What waits for all clients together, against `--max-client-memory`.
    var clientMemory: ClientMemoryBudget {
        didSet {
            engine.daemonStatistics.clientMemoryBytes = clientMemory.total
            engine.daemonStatistics.clientMemoryPeakBytes = clientMemory.peak
            engine.daemonStatistics.clientMemoryCongestions = clientMemory.congestions
        }
    }
    /// With a data directory: what output waits for to be committed (the
    /// daemon's storage sets it).
    var groupCommit: GroupCommit?
    /// Connections to flush at the turn's end.
    var flushQueue: [ClientConnection] = []
    /// Connections with output held until a batch is committed.
    var holdingOutput: [ClientConnection] = []
    /// Connections that used up their turn's budget, continued next turn.
    var turnYield: TurnYield?
    /// A client ended: its observations are gone (the cluster's and backups' share).
    var clientClosed: (ClientController) -> Void = { _ in }
    /// Called from a connection's close callback: its socket is gone.
    var connectionClosed: (ClientConnection) -> Void = { _ in }

    init(configuration: DaemonConfiguration, engine: Engine, logger: Logger, loop: UVLoop) {
        self.engine = engine
        self.logger = logger
        self.loop = loop
        maxLineBytes = configuration.maxLineBytes
        outputLimits = configuration.outputLimits
        slowTurns = SlowTurnLog(thresholdMicroseconds: configuration.slowTurnMicroseconds)
        pacing = FanOutPacing(pauseMicroseconds: configuration.fanOutPauseMicroseconds)
        clientMemory = ClientMemoryBudget(limit: configuration.maxClientMemory)
        engine.clientMemoryLimit = configuration.maxClientMemory
        engine.daemonStatistics.clientMemoryLimitBytes = configuration.maxClientMemory
    }

    /// The loop's clock, in milliseconds.
    var now: UInt64 { loop.now }

    func scheduleFlush(_ connection: ClientConnection) {
        guard !connection.isScheduledForFlush else { return }
        connection.isScheduledForFlush = true
        flushQueue.append(connection)
    }

    /// Runs `body`, work outside any request, and notes its time for the
    /// slow-turn line (``SlowTurnLog``).
    @inline(__always)
    func timed(_ name: StaticString, _ body: () -> Void) {
        let started = UVLoop.hrtime
        body()
        slowTurns.noteWork(name, nanoseconds: UVLoop.hrtime &- started)
    }
}
