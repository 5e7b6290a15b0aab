import KVODCore

/// When clients wait for room under `--max-client-memory` and those holding
/// it do not read, disconnects some of them, checked each second: of the
/// connections whose output has waited unread for `--output-soft-seconds`,
/// the one holding the most (``ClientMemoryBudget/evictee(among:now:patienceMilliseconds:bytes:unreadSince:)``,
/// Redis 7's client eviction), then the next, until what they held makes
/// room. Without it, a few clients that never read could keep every large
/// event from everyone else. Loop-confined.
final class ClientMemoryEviction {
    static let intervalMilliseconds: UInt64 = 1000
    private let timer: UVTimer
    private let host: ConnectionHost
    private let patienceMilliseconds: UInt64
    private let connections: () -> Dictionary<Int, ClientConnection>.Values
    private var isArmed = false

    init(loop: UVLoop, host: ConnectionHost, patienceMilliseconds: UInt64,
         connections: @escaping () -> Dictionary<Int, ClientConnection>.Values) {
        timer = UVTimer(loop: loop)
        self.host = host
        self.patienceMilliseconds = patienceMilliseconds
        self.connections = connections
    }

    /// Arms the check while clients wait for room (after each loop pass).
    func armIfWaiting() {
        guard !isArmed, host.engine.hasClientsWaitingForMemory else { return }
        isArmed = true
        timer.start(afterMilliseconds: Self.intervalMilliseconds) { [unowned self] in
            self.isArmed = false
            self.check()
        }
    }

    private func check() {
        guard host.engine.hasClientsWaitingForMemory else { return }
        let now = host.now
        // What output is over the budget, and one byte: the room the waiting clients need.
        var excess = host.clientMemory.outputTotal - host.clientMemory.limit
        while excess >= 0,
              let evicted = ClientMemoryBudget.evictee(among: connections().lazy.filter { !$0.isClosing }, now: now,
                                                       patienceMilliseconds: patienceMilliseconds,
                                                       bytes: { $0.pendingOutputBytes },
                                                       unreadSince: { $0.unreadSince }) {
            let bytes = evicted.pendingOutputBytes
            excess -= bytes
            host.logger.warning("""
                \(evicted.logName) disconnected: it has not read \(bytes) bytes for \
                \(now - (evicted.unreadSince ?? now)) ms while other clients wait for room under --max-client-memory
                """)
            host.engine.noteClientMemoryEviction()
            evicted.close(flush: false)
        }
    }

    func close() {
        timer.close()
    }
}
