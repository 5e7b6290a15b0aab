import CEpoll
#if canImport(Glibc)
import Glibc
#endif

/// An epoll set of connections, served by the one thread that owns it: reads
/// are level-triggered; a connection is watched for writability only while
/// it has unsent bytes.
final class Poller {
    private let epoll: Int32
    private(set) var connections: [Connection] = []
    private var ready: [epoll_event]
    /// One read buffer for all connections: each read is parsed before the next.
    private let scratch: UnsafeMutableRawBufferPointer

    /// `readBytes`: the most one read takes from a connection.
    init(readBytes: Int = 256 * 1024) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        ready = [epoll_event](repeating: epoll_event(), count: 1024)
        scratch = .allocate(byteCount: readBytes, alignment: 16)
    }

    deinit {
        close(epoll)
        scratch.deallocate()
    }

    func add(_ connection: Connection) {
        connection.pollerSlot = connections.count
        connections.append(connection)
        control(EPOLL_CTL_ADD, connection, EPOLLIN.rawValue)
    }

    /// The wake-up the poll also waits for, if any (its slot: `UInt64.max`).
    private var wakeup: RoomSignal?

    /// Also wakes ``poll(timeoutMilliseconds:)`` when `signal` is notified.
    func add(_ signal: RoomSignal) {
        wakeup = signal
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64.max
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, signal.fd, &event)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for readiness, then
    /// reads and writes what is ready. `readAt` is stamped on each
    /// connection before its bytes are parsed. Returns how many were ready.
    @discardableResult
    func poll(timeoutMilliseconds: Int32) -> Int {
        let count = ready.withUnsafeMutableBufferPointer {
            epoll_wait(epoll, $0.baseAddress, Int32($0.count), timeoutMilliseconds)
        }
        guard count > 0 else { return 0 }
        let now = monotonicNanoseconds()
        for slot in 0..<Int(count) {
            let event = ready[slot]
            if event.data.u64 == UInt64.max {
                wakeup?.drain()
                continue
            }
            let connection = connections[Int(event.data.u64)]
            if event.events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                connection.readAt = now
                connection.readAvailable(scratch)
            }
            if event.events & EPOLLOUT.rawValue != 0 { connection.flush() }
            if connection.problem != nil && connection.pollerSlot >= 0 {
                // A broken connection would be reported ready forever; the scenario reads its problem.
                _ = epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, nil)
                connection.pollerSlot = -1
                continue
            }
            updateInterest(connection)
        }
        return Int(count)
    }

    /// Watches `connection` for writability exactly while it has unsent bytes.
    func updateInterest(_ connection: Connection) {
        guard connection.pollerSlot >= 0 else { return }
        let wants = !connection.unsent.isEmpty
        guard wants != connection.wantsWritable else { return }
        connection.wantsWritable = wants
        control(EPOLL_CTL_MOD, connection, EPOLLIN.rawValue | (wants ? EPOLLOUT.rawValue : 0))
    }

    private func control(_ operation: Int32, _ connection: Connection, _ events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(connection.pollerSlot)
        _ = epoll_ctl(epoll, operation, connection.fd, &event)
    }
}
