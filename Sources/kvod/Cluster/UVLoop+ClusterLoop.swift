import KVOCluster

/// The replica's timers and clock are the daemon's loop's.
extension UVLoop: ClusterLoop {
    func makeTimer() -> any ClusterTimer { UVTimer(loop: self) }
    var nanoseconds: UInt64 { Self.hrtime }
}

extension UVTimer: ClusterTimer {
    func close() { close(onClosed: nil) }
}
