import KVOProtocol
import KVOValues

/// The part of `info` about resources: the memory account and its limit,
/// the history's size, refusals by limit, the data directory's room to
/// write, and the event loop's lag (the daemon's figures, printed as given).
extension Engine {
    /// kvod's memory account, in bytes: what `--max-memory` bounds (``ResourceAccount/memoryEstimate``).
    public var memoryEstimate: Int { resources.memoryEstimate }

    /// Requests refused for a limit on resources, for `info`.
    public var refusals: EngineRefusals { resources.refusals }

    /// `tellsSizes`: whether the client may read every value; a client that
    /// may not is told no figure that follows values' sizes (docs/SECURITY.md).
    func writeResourceInfo(tellsSizes: Bool, into reply: inout ReplyEncoder) {
        reply.field(.memory, .object(resources.memoryFigures(tellsSizes: tellsSizes)))
        let daemon = daemonStatistics
        if tellsSizes { reply.field(.clientMemory, .object(JSONObject([
            InfoFigure.Memory.total: Self.number(daemon.clientMemoryBytes),
            .peak: Self.number(daemon.clientMemoryPeakBytes),
            .limit: Self.number(daemon.clientMemoryLimitBytes),
            .congested: Self.number(daemon.clientMemoryCongestions + shared.clientMemory.congestions),
            .evicted: Self.number(shared.clientMemory.evictions),
        ]))) }
        reply.field(.historyChanges, integer: history.count)
        reply.field(.eventsSent, integer: shared.eventsSent)
        reply.field(.eventsCoalesced, integer: shared.eventsCoalesced)
        reply.field(.coalescingConnections, integer: shared.coalescingClients)
        reply.field(.refused, .object(JSONObject([
            InfoFigure.Refused.connections: Self.number(daemon.refusedConnections),
            .connectionsPerUid: Self.number(daemon.refusedConnectionsPerUID),
            .observations: Self.number(resources.refusals.observations),
            .memory: Self.number(resources.refusals.memory),
            .storage: Self.number(resources.refusals.storage),
        ])))
        writeStorageInfo(tellsSizes: tellsSizes, into: &reply)
        reply.field(.loopLagLastMs, Self.milliseconds(daemon.loopLagLastMicroseconds))
        reply.field(.loopLagMaxMs, Self.milliseconds(daemon.loopLagMaxMicroseconds))
        reply.field(.loopLagPeakMs, Self.milliseconds(daemon.loopLagPeakMicroseconds))
        reply.field(.loopCpuLastMs, Self.milliseconds(daemon.loopCPULastMicroseconds))
        reply.field(.loopCpuMaxMs, Self.milliseconds(daemon.loopCPUMaxMicroseconds))
        reply.field(.loopCpuPeakMs, Self.milliseconds(daemon.loopCPUPeakMicroseconds))
        reply.field(.loopTurns, integer: daemon.loopTurns)
        // The longest turn since the previous `info`: each one starts a new window.
        daemonStatistics.loopLagMaxMicroseconds = 0
        daemonStatistics.loopCPUMaxMicroseconds = 0
    }

    private static func number(_ value: Int) -> JSONValue {
        .number(JSONNumber(value))
    }

    /// Microseconds as milliseconds with three decimals (`12.345`).
    static func milliseconds(_ microseconds: UInt64) -> JSONValue {
        let fraction = String(microseconds % 1000)
        let literal = "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        return .number(JSONNumber(validatedLiteral: literal))
    }
}
