import Glibc

/// The clock a history's call and return times are read from: CLOCK_MONOTONIC,
/// in seconds, which no change of the wall clock moves.
enum MonotonicClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
