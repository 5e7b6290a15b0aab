/// `--max-client-memory` where events are written. The daemon's budget
/// (`ClientMemoryBudget`) learns what waits for each client when it flushes
/// that client, after the engine wrote a change's event to every observer, so
/// one large change to many clients that do not read would put a copy in
/// each before it is counted (docs/RELIABILITY.md). So the engine also checks,
/// before each event it writes or drains, what the daemon last counted plus
/// what the engine wrote since (``unflushed``). An event that does not fit
/// goes to its observation's policy (held without its bytes, or the end of a
/// `disconnect` client), and a held client drains only while there is room;
/// one with nothing to send waits in ``SharedController/clientMemoryWaiters``
/// until the daemon's count goes down
/// (``SharedController/wakeClientsWaitingForMemory()``).
///
/// The room counts output only: the 96 bytes per held event that the
/// daemon's budget also counts go away only by draining, which needs room.
///
/// An event of at most ``floorBytes`` still goes to a client that holds
/// nothing, so that a budget filled by clients that do not read delays only
/// large events for the others; the bound is the budget, one event, and
/// ``floorBytes`` per connection.
///
/// Integers only: every event reads it, and a member that counts references
/// would make each read a copy with a retain and a release (the waiting list
/// is the shared controller's; docs/PERFORMANCE.md).
struct ClientMemoryRoom {
    /// The budget in bytes; 0: none.
    var limit = 0
    /// Output waiting for all clients as the daemon last counted it (held events not included).
    var reported = 0
    /// Event bytes the engine wrote into outputs since the daemon last took them all
    /// (``Engine/noteOutputsTaken()``, after each pass of flushes).
    var unflushed = 0
    /// Clients sent to their policy here, since start (`info`'s `clientMemory.congested` adds them).
    var congestions = 0
    /// Clients the daemon disconnected for holding the room unread (`info`'s `clientMemory.evicted`).
    var evictions = 0
    /// How many of ``SharedController/clientMemoryWaiters`` still wait.
    var waiting = 0

    static let floorBytes = 16 << 10

    /// Whether anything more may be written now.
    var hasRoom: Bool { limit == 0 || reported &+ unflushed < limit }

    /// The bytes that may still be written now; `Int.max` without a budget.
    var room: Int { limit == 0 ? .max : limit &- reported &- unflushed }
}

extension Engine {
    /// `--max-client-memory`, in bytes (0: none), as events are written.
    public var clientMemoryLimit: Int {
        get { shared.clientMemory.limit }
        set { shared.clientMemory.limit = newValue }
    }

    /// The daemon counted `total` bytes of output waiting for all clients (its
    /// `ClientMemoryBudget`'s, held events and output the engine wrote since not
    /// included); it tells it once per pass of flushes, not at each report.
    @inline(__always)
    public func noteClientMemory(total: Int) {
        shared.clientMemory.reported = total
    }

    /// The daemon disconnected a client that held the room unread while others waited.
    public func noteClientMemoryEviction() {
        shared.clientMemory.evictions += 1
    }

    /// The daemon took every client's output (a pass of flushes): it is in
    /// its count now, no longer the engine's to add.
    @inline(__always)
    public func noteOutputsTaken() {
        shared.clientMemory.unflushed = 0
    }

    /// Whether held clients wait for room under `--max-client-memory`.
    public var hasClientsWaitingForMemory: Bool { shared.clientMemory.waiting > 0 }

    /// Lets the clients that wait for room drain while there is some; call it
    /// after a pass of flushes, which is when the count goes down.
    public func wakeClientsWaitingForMemory() {
        shared.wakeClientsWaitingForMemory()
    }
}
