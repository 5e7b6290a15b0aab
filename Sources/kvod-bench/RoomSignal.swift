import CEpoll
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Wakes the setter thread the moment the observers have read events while
/// it waits for room under the lag bound, as a producer with flow control is
/// woken by its consumer's acknowledgement. Without it the setter slept on a
/// poll timeout and the rate measured that timer, not the server.
final class RoomSignal: Sendable {
    /// An eventfd: readable while a wake-up is pending.
    let fd: Int32
    private let waiting = Atomic<Bool>(false)

    init() {
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit { close(fd) }

    /// The setter is about to wait: the next ``notify()`` writes the eventfd.
    /// The setter looks at the delivered count again after this, so a
    /// delivery between its look and this call is not missed.
    func arm() {
        waiting.store(true, ordering: .sequentiallyConsistent)
    }

    /// The observers delivered events: wake the setter if it waits.
    func notify() {
        guard waiting.exchange(false, ordering: .sequentiallyConsistent) else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Takes the pending wake-up (called by the poller when `fd` is readable).
    func drain() {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }
}
