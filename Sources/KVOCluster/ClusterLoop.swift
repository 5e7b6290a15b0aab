/// The loop the replica runs on, as far as it needs one: timers and a
/// monotonic clock. The daemon's libuv loop in kvod; a clock the tests move
/// by hand in KVOClusterTests, so that no test sleeps.
public protocol ClusterLoop: AnyObject {
    /// A new timer on this loop, stopped.
    func makeTimer() -> any ClusterTimer
    /// Nanoseconds of a monotonic clock.
    var nanoseconds: UInt64 { get }
}

/// A loop's timer: one callback at a time, again every `repeatMilliseconds` unless 0.
public protocol ClusterTimer: AnyObject {
    /// (Re)starts the timer: `handler` runs after `afterMilliseconds`.
    func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64, handler: @escaping () -> Void)
    func stop()
    /// Stops the timer for good and lets go of its loop handle.
    func close()
}

extension ClusterTimer {
    func start(afterMilliseconds: UInt64, handler: @escaping () -> Void) {
        start(afterMilliseconds: afterMilliseconds, repeatMilliseconds: 0, handler: handler)
    }
}
