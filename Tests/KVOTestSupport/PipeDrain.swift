import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a pipe to its end on a thread of its own with blocking reads,
/// handing each chunk to `received`. Not `FileHandle.readabilityHandler`:
/// tearing that down races libdispatch's epoll bookkeeping on Linux
/// (swift-corelibs-libdispatch #949), which crashed two parallel test runs
/// in `_dispatch_event_loop_drain`; a blocking read never registers the
/// descriptor with libdispatch.
///
/// @unchecked Sendable: `ended` is only touched with `lock` held.
public final class PipeDrain: @unchecked Sendable {
    private let lock = NSLock()
    private var ended = false
    private let endSignal = DispatchSemaphore(value: 0)

    /// Starts reading `handle` (a pipe's read end, which the drain owns from
    /// now on) until end of file.
    public init(_ handle: FileHandle, received: @escaping @Sendable (Data) -> Void) {
        let fd = handle.fileDescriptor
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    received(Data(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            withExtendedLifetime(handle) {}
            lock.withLock { ended = true }
            endSignal.signal()
        }.start()
    }

    /// Waits until the pipe has ended (every writer closed it), at most
    /// `timeout` seconds; returns whether it has.
    @discardableResult
    public func waitForEnd(timeout: Double) -> Bool {
        if lock.withLock({ ended }) { return true }
        guard endSignal.wait(timeout: .now() + timeout) == .success else { return false }
        endSignal.signal()  // for the next waiter
        return true
    }
}
