/// Throttled observations (`throttle` in `observe`): the daemon drives their
/// intervals, as it drives lease expiry.
extension Engine {
    /// When the next throttle interval ends, in milliseconds on
    /// ``monotonicMilliseconds()`` (or the configuration's clock); nil: none is open.
    public var nextThrottleDeadline: UInt64? { shared.throttleSchedule.nextDeadline }

    /// Ends the throttle intervals due at `now`: each sends the event folded
    /// in it (the latest state, with `"coalesced":N`) and opens the next one.
    public func releaseThrottledEvents(at now: UInt64) {
        let schedule = shared.throttleSchedule
        while let entry = schedule.popDue(at: now) {
            guard entry.info.state == .observing else { continue }
            entry.info.owner.endThrottleInterval(of: entry.info, object: entry.object, at: now)
        }
    }
}
