import Glibc

/// Times the event loop's turns: how long each one worked, from the end of
/// one turn's writes to the end of the next (the daemon calls ``turnEnded()``
/// once its prepare-phase flush is done), less the time it waited in epoll
/// (libuv's idle-time metric). That is about the longest a client's request
/// can wait before kvod reads it: the loop's lag. It is read after the
/// writes, so that its clocks and the metrics it records are not between a
/// change and its events. Beside it, the loop thread's own CPU time over the
/// same turn: on a busy machine the wall time also counts the turns the
/// scheduler gave other processes, the CPU time only kvod's work (waiting in
/// epoll costs next to none). Every turn is reported to `record`, wall then
/// CPU, in microseconds. Loop-confined (the CPU clock is the calling
/// thread's: the loop's).
final class LoopLagMeter {
    private let loop: UVLoop
    private let record: (UInt64, UInt64) -> Void
    private var lastEnd: UInt64
    private var lastIdle: UInt64
    private var lastCPU: UInt64

    /// Starts measuring; throws when libuv cannot count its idle time.
    init(loop: UVLoop, record: @escaping (UInt64, UInt64) -> Void) throws(UVError) {
        try loop.measureIdleTime()
        self.loop = loop
        self.record = record
        lastEnd = UVLoop.hrtime
        lastIdle = loop.idleNanoseconds
        lastCPU = Self.threadCPUNanoseconds
    }

    /// Ends the turn that is measured now and starts the next one.
    func turnEnded() {
        let now = UVLoop.hrtime
        let idle = loop.idleNanoseconds
        let elapsed = now &- lastEnd
        let waited = idle &- lastIdle
        let cpu = Self.threadCPUNanoseconds
        let worked = cpu &- lastCPU
        lastEnd = now
        lastIdle = idle
        lastCPU = cpu
        record(elapsed > waited ? (elapsed - waited) / 1000 : 0, worked / 1000)
    }

    /// The calling thread's CPU time (user and system), from the vDSO.
    private static var threadCPUNanoseconds: UInt64 {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
