import Glibc

/// The smallest ``EtcdEventDriver``: poll(2) over the client's sockets and one
/// timer, turned by the caller. For tests and tools; kvod drives its client from libuv.
public final class EtcdPollLoop: EtcdEventDriver {
    private var interests: [Int32: EtcdSocketInterest] = [:]
    private var timerDeadline: ContinuousClock.Instant?
    /// The client this loop drives (weak: the client keeps its driver).
    public weak var client: EtcdClient?

    public init() {}

    public func watch(socket: Int32, for interest: EtcdSocketInterest?) {
        interests[socket] = interest
    }

    public func scheduleTimer(milliseconds: Int?) {
        timerDeadline = milliseconds.map { ContinuousClock.now + .milliseconds($0) }
    }

    /// Waits up to `maxWaitMilliseconds` for a socket or the timer, then hands
    /// what is ready to the client.
    public func turn(maxWaitMilliseconds: Int) {
        var wait = maxWaitMilliseconds
        if let timerDeadline {
            let left = timerDeadline - ContinuousClock.now
            wait = min(wait, max(0, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
        }
        var fds = interests.map { socket, interest in
            let events: Int16 = switch interest {
            case .readable: Int16(POLLIN)
            case .writable: Int16(POLLOUT)
            case .readableAndWritable: Int16(POLLIN | POLLOUT)
            }
            return pollfd(fd: socket, events: events, revents: 0)
        }
        let ready = poll(&fds, nfds_t(fds.count), Int32(wait))
        if ready > 0 {
            for entry in fds where entry.revents != 0 && interests[entry.fd] != nil {
                let failed = entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
                client?.socketReady(entry.fd, readable: entry.revents & Int16(POLLIN) != 0,
                                    writable: entry.revents & Int16(POLLOUT) != 0, failed: failed)
            }
        }
        if let deadline = timerDeadline, deadline <= ContinuousClock.now {
            timerDeadline = nil
            client?.timerFired()
        }
    }
}
