/// Figures the daemon keeps about itself, which `info` reports: the daemon
/// updates them, the engine only prints them (it knows nothing of event
/// loops or sockets).
public struct DaemonStatistics: Sendable, Equatable {
    /// How long the event loop's last finished turn worked (its time minus
    /// what it waited for I/O), in microseconds.
    public var loopLagLastMicroseconds: UInt64 = 0
    /// The longest turn since the previous `info` (or since start).
    public var loopLagMaxMicroseconds: UInt64 = 0
    /// The longest turn since start.
    public var loopLagPeakMicroseconds: UInt64 = 0
    /// The longest turn since the previous `metrics` (or since start).
    public var loopLagScrapeMaxMicroseconds: UInt64 = 0
    /// The same turns in the loop thread's own CPU time (not its wall
    /// time, which a busy machine's preemption stretches): the last, the
    /// longest since the previous `info`, the longest since start.
    public var loopCPULastMicroseconds: UInt64 = 0
    public var loopCPUMaxMicroseconds: UInt64 = 0
    public var loopCPUPeakMicroseconds: UInt64 = 0
    /// Turns the loop has finished since start: an idle kvod adds few, a
    /// spinning one (a socket left readable) thousands a second.
    public var loopTurns: UInt64 = 0
    /// Clients refused because kvod already served `--max-connections`.
    public var refusedConnections = 0
    /// Clients refused because their uid already had `--max-connections-per-uid`.
    public var refusedConnectionsPerUID = 0
    /// What waits for all clients together (output and held events), as
    /// last reported, its peak since start and its budget (`--max-client-memory`; 0: none).
    public var clientMemoryBytes = 0
    public var clientMemoryPeakBytes = 0
    public var clientMemoryLimitBytes = 0
    /// Connections that the budget sent to their observations' policy.
    public var clientMemoryCongestions = 0

    /// Notes one finished turn of the loop that worked `microseconds` of
    /// wall time and `cpuMicroseconds` of the loop thread's CPU time.
    public mutating func recordLoopTurn(microseconds: UInt64, cpuMicroseconds: UInt64 = 0) {
        loopTurns &+= 1
        loopLagLastMicroseconds = microseconds
        loopLagMaxMicroseconds = max(loopLagMaxMicroseconds, microseconds)
        loopLagPeakMicroseconds = max(loopLagPeakMicroseconds, microseconds)
        loopLagScrapeMaxMicroseconds = max(loopLagScrapeMaxMicroseconds, microseconds)
        loopCPULastMicroseconds = cpuMicroseconds
        loopCPUMaxMicroseconds = max(loopCPUMaxMicroseconds, cpuMicroseconds)
        loopCPUPeakMicroseconds = max(loopCPUPeakMicroseconds, cpuMicroseconds)
    }
}
