/// One budget for what waits for all clients together (`--max-client-memory`,
/// Redis 7's `maxmemory-clients`): output in the engine, in the sockets'
/// queues and held for a commit, and held events. Each connection's own
/// output limits bound it alone; this bounds their sum, so that many slow
/// readers of one flat-out writer cannot hold gigabytes between them.
///
/// Over the budget, a connection that holds at least its share of it (the
/// budget over the connections that hold any) goes to its observations'
/// policy when it next reports: its events are held and coalesced, or it is
/// disconnected for `policy: disconnect`. Whenever the sum is over, the
/// connection holding the most holds more than that share, so it goes first.
/// Replies are never held: a writer is never slowed by another's slow reader.
///
/// The engine checks the same budget as it writes each event (its
/// `ClientMemoryRoom`): clients whose events do not fit are held and drain
/// when there is room. When clients that do not read hold the whole budget,
/// ``evictee(among:now:patienceMilliseconds:bytes:unreadSince:)`` picks
/// which of them is disconnected, so that the others are served again.
///
/// Each connection keeps what it last reported (``Report``), so a report is
/// a few additions: it is made at every flush of every connection.
public struct ClientMemoryBudget: Sendable {
    /// What one connection last reported; it starts at nothing.
    public struct Report: Sendable {
        fileprivate var bytes = 0
        fileprivate var heldBytes = 0
        public init() {}
    }

    /// The budget in bytes; 0: none.
    public let limit: Int
    /// What waits for all clients, as last reported.
    public private(set) var total = 0
    /// The part of ``total`` that is output (held events' estimates not
    /// included): what the engine checks as it writes, since held events go
    /// only by draining into output.
    public var outputTotal: Int { total - heldTotal }
    private var heldTotal = 0
    /// The largest ``total`` since start.
    public private(set) var peak = 0
    /// Connections sent to their policy by the budget since start.
    public private(set) var congestions = 0
    /// How many connections hold anything.
    public private(set) var holders = 0

    public init(limit: Int) {
        self.limit = limit
    }

    /// Records that `bytes` wait for a connection whose last report is
    /// `last` (0 when it closed), `heldBytes` of them for its held events.
    /// Returns whether it must go to its observations' policy now.
    @inline(__always)
    public mutating func report(_ bytes: Int, held heldBytes: Int = 0, replacing last: inout Report) -> Bool {
        if bytes == 0, last.bytes == 0 { return false }
        return change(to: bytes, held: heldBytes, from: &last)
    }

    private mutating func change(to bytes: Int, held heldBytes: Int, from last: inout Report) -> Bool {
        if last.bytes == 0 { holders += 1 }
        if bytes == 0 { holders -= 1 }
        total += bytes - last.bytes
        heldTotal += heldBytes - last.heldBytes
        last.bytes = bytes
        last.heldBytes = heldBytes
        peak = max(peak, total)
        guard limit > 0, total > limit, bytes > 0, bytes >= limit / holders else { return false }
        congestions += 1
        return true
    }

    /// While clients wait for the budget's room, the connection to disconnect
    /// (Redis 7's client eviction): of those whose output has waited unread
    /// for `patienceMilliseconds` or more (`unreadSince`, loop ms; nil: they
    /// took everything since), the one holding the most (`bytes`). Nil: none
    /// such, so the room comes from clients that read.
    public static func evictee<Connection>(among connections: some Sequence<Connection>, now: UInt64,
                                           patienceMilliseconds: UInt64, bytes: (Connection) -> Int,
                                           unreadSince: (Connection) -> UInt64?) -> Connection? {
        var chosen: (connection: Connection, bytes: Int)?
        for connection in connections {
            guard let since = unreadSince(connection), now >= since, now - since >= patienceMilliseconds else { continue }
            let held = bytes(connection)
            if held > 0, held > chosen?.bytes ?? 0 { chosen = (connection, held) }
        }
        return chosen?.connection
    }

    /// The default budget: a quarter of `--max-memory` when it is set, else
    /// an eighth of the machine's memory (`physicalBytes`), and never less
    /// than `floor` (one connection's hard output limit twice over).
    public static func defaultLimit(maxMemory: Int, physicalBytes: Int, floor: Int) -> Int {
        max(maxMemory > 0 ? maxMemory / 4 : physicalBytes / 8, floor)
    }
}
