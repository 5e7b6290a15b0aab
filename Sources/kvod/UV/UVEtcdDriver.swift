import KVOEtcd

/// Drives an ``EtcdClient`` from the daemon's libuv loop, as libcurl's
/// "multi_socket" pattern asks: a ``UVPoll`` per socket libcurl wants watched
/// and one ``UVTimer`` for its timeouts. No second loop, no thread.
final class UVEtcdDriver: EtcdEventDriver {
    /// The client driven (weak: the client keeps its driver).
    weak var client: EtcdClient?
    private let loop: UVLoop
    private var polls: [Int32: UVPoll] = [:]
    private var timer: UVTimer?

    init(loop: UVLoop) {
        self.loop = loop
        timer = UVTimer(loop: loop)
    }

    func watch(socket: Int32, for interest: EtcdSocketInterest?) {
        guard let interest else {
            // Closing stops the poll at once, before libcurl closes the socket.
            polls.removeValue(forKey: socket)?.close()
            return
        }
        let poll = polls[socket] ?? UVPoll(loop: loop, socket: socket)
        polls[socket] = poll
        poll.start(readable: interest != .writable, writable: interest != .readable) { [weak self] readable, writable, failed in
            self?.client?.socketReady(socket, readable: readable, writable: writable, failed: failed)
        }
    }

    func scheduleTimer(milliseconds: Int?) {
        guard let milliseconds else { return timer?.stop() ?? () }
        timer?.start(afterMilliseconds: UInt64(max(0, milliseconds))) { [weak self] in self?.client?.timerFired() }
    }

    /// Closes every handle: the daemon is stopping.
    func close() {
        for poll in polls.values { poll.close() }
        polls = [:]
        timer?.close()
        timer = nil
    }
}
