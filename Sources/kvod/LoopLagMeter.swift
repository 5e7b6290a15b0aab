/// Times the event loop's turns: how long each one worked, from one check
/// phase (right after the I/O callbacks) to the next, less the time it
/// waited in epoll (libuv's idle-time metric). That is about the longest a
/// client's request can wait before kvod reads it: the loop's lag. Every
/// turn is reported to `record`, in microseconds. Loop-confined.
final class LoopLagMeter {
    private let loop: UVLoop
    private let check: UVCheck
    private let record: (UInt64) -> Void
    private var lastCheck: UInt64
    private var lastIdle: UInt64

    /// Starts measuring; throws when libuv cannot count its idle time.
    init(loop: UVLoop, record: @escaping (UInt64) -> Void) throws(UVError) {
        try loop.measureIdleTime()
        self.loop = loop
        self.record = record
        check = UVCheck(loop: loop)
        lastCheck = UVLoop.hrtime
        lastIdle = loop.idleNanoseconds
        check.start { [unowned self] in self.turnEnded() }
    }

    private func turnEnded() {
        let now = UVLoop.hrtime
        let idle = loop.idleNanoseconds
        let elapsed = now &- lastCheck
        let waited = idle &- lastIdle
        lastCheck = now
        lastIdle = idle
        record(elapsed > waited ? (elapsed - waited) / 1000 : 0)
    }

    func close() {
        check.close()
    }
}
