import KVOCluster

/// The replica's timers and clock are the daemon's loop's.
extension UVLoop: ClusterLoop {
    func makeTimer() -> any ClusterTimer { UVClusterTimer(UVTimer(loop: self)) }
    var nanoseconds: UInt64 { Self.hrtime }
}

/// A ``UVTimer`` as the replica uses one.
final class UVClusterTimer: ClusterTimer {
    private let timer: UVTimer

    init(_ timer: UVTimer) {
        self.timer = timer
    }

    func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64, handler: @escaping () -> Void) {
        timer.start(afterMilliseconds: afterMilliseconds, repeatMilliseconds: repeatMilliseconds, handler: handler)
    }

    func stop() { timer.stop() }
    func close() { timer.close() }
}
