/// Throttled observations (`throttle` in `observe`, issue 15): at most one
/// event per interval. The first change goes at once and opens an interval;
/// the changes within it are folded into one event, the latest, sent when
/// it ends with `"coalesced":N` (as a congested client's held event), which
/// opens the next interval. An interval that ends with nothing folded is
/// dropped. A prefix observation has an interval per object, as it holds an
/// event per object while congested; an object's deletion goes at once and
/// ends its interval, so none is kept for an object that no longer exists.
struct ThrottleWindow {
    /// When it ends, in milliseconds on the engine's throttle clock.
    var end: UInt64
    /// The latest change folded in it and how many before it were dropped.
    var pending: HeldEvents.Event?
}

extension ClientController {
    /// Whether an event of `change` for a throttled `info` goes out now:
    /// when no interval is open (a change event then opens one). Within an
    /// interval, a change event is folded into its pending event and a prior
    /// event is dropped (the change that follows stands for it).
    func admitThrottled(_ change: ChangeRecord, for info: ObservationInfo, interval: UInt32, isPrior: Bool,
                        now: UInt64) -> Bool {
        guard !isClosed, disconnectReason == nil else { return false }
        let key = ObjectIdentifier(info)
        let object = info.node?.isPrefixScope == true ? change.object : ""
        if !object.isEmpty, change.deletesObject, !isPrior, let window = throttles[key]?[object] {
            return endThrottle(window, of: info, object: object, with: change)
        }
        if var window = throttles[key]?[object], now < window.end || window.pending != nil {
            guard !isPrior else { return false }
            let folded = window.pending.map { $0.folded + 1 } ?? 0
            window.pending = HeldEvents.Event(info: info, change: change, folded: folded)
            throttles[key]![object] = window
            return false
        }
        guard !isPrior else { return true }
        open(ThrottleWindow(end: now + UInt64(interval)), of: info, object: object)
        return true
    }

    /// The interval of `info` (for `object`) that was due at `now`: sends
    /// its pending event and opens the next one, or drops it if nothing was
    /// folded. An entry for an interval since reopened is not due yet.
    func endThrottleInterval(of info: ObservationInfo, object: String, at now: UInt64) {
        let key = ObjectIdentifier(info)
        guard let window = throttles[key]?[object], window.end <= now else { return }
        guard let pending = window.pending, let interval = info.filter.throttle else {
            throttles[key]![object] = nil
            if throttles[key]!.isEmpty { throttles[key] = nil }
            shared.throttleSchedule.openIntervals -= 1
            return
        }
        open(ThrottleWindow(end: now + UInt64(interval)), of: info, object: object)
        send(folded: pending)
    }

    /// A prefix observation's object was deleted within its interval: the
    /// deletion goes now (standing for what was folded) and the interval is
    /// forgotten, so nothing is kept for an object that no longer exists.
    /// Returns whether the caller sends the deletion itself (nothing was folded).
    private func endThrottle(_ window: ThrottleWindow, of info: ObservationInfo, object: String,
                             with change: ChangeRecord) -> Bool {
        let key = ObjectIdentifier(info)
        throttles[key]![object] = nil
        if throttles[key]!.isEmpty { throttles[key] = nil }
        shared.throttleSchedule.openIntervals -= 1
        guard let pending = window.pending else { return true }
        send(folded: HeldEvents.Event(info: info, change: change, folded: pending.folded + 1))
        return false
    }

    private func open(_ window: ThrottleWindow, of info: ObservationInfo, object: String) {
        let schedule = shared.throttleSchedule
        if throttles[ObjectIdentifier(info), default: [:]].updateValue(window, forKey: object) == nil {
            schedule.openIntervals += 1
        }
        schedule.add(ThrottleSchedule.Entry(time: window.end, info: info, object: object))
    }

    /// Whether `entry` is its interval's (which is still open).
    func isOpen(_ entry: ThrottleSchedule.Entry) -> Bool {
        throttles[ObjectIdentifier(entry.info)]?[entry.object]?.end == entry.time
    }

    /// Sends an interval's folded event, or holds it (with its count) while
    /// the client is congested.
    private func send(folded event: HeldEvents.Event) {
        guard !isClosed, disconnectReason == nil else { return }
        if isCongested {
            switch event.info.policy {
            case .coalesce:
                held.hold(event.change, for: event.info, scoped: event.info.node?.isPrefixScope ?? false,
                          folded: event.folded)
            case .disconnect:
                hold(event.change, for: event.info, isPrior: false)
            }
            return
        }
        let wasEmpty = output.isEmpty
        write(event)
        if SlowReaderPolicy.overflows(output.count, allowance: outputAllowance) { becomeCongested() }
        if wasEmpty, !output.isEmpty { outputDelegate?.clientControllerHasOutput(self) }
    }

    /// Forgets the intervals of an observation that ends.
    func dropThrottle(of info: ObservationInfo) {
        guard let windows = throttles.removeValue(forKey: ObjectIdentifier(info)) else { return }
        shared.throttleSchedule.openIntervals -= windows.count
    }

    /// Forgets every interval of this client's (it unobserves everything).
    func dropAllThrottles() {
        shared.throttleSchedule.openIntervals -= throttles.values.reduce(0) { $0 + $1.count }
        throttles = [:]
    }
}
