import Dispatch

/// Request deadlines (``KVOConnection/Configuration/requestTimeout``).
///
/// Every caller's request has the same timeout, so deadlines come in the
/// order requests are made, and one check per connection suffices: it is
/// scheduled for the oldest deadline still pending, tells the callers whose
/// deadline has passed, and schedules itself for the next one. A reply
/// removes its caller from the front as it comes, so what is kept is the
/// requests in flight, not every request of the last timeout.
///
/// A request already written stays in the FIFO of replies when its caller
/// gives up: kvod's late reply is matched to it and dropped, so the
/// connection stays usable. A request not yet written (the connection is
/// reconnecting) is withdrawn: it will never be sent.
extension ConnectionCore {
    /// A waiter for one caller's reply, with the configured deadline from now.
    /// `extraTime` lengthens it for a reply that kvod holds back on purpose (an
    /// awaited write); the requests behind it wait as long, since kvod answers in order.
    func waiter(_ handler: ReplyWaiter.Handler, extraTime: Duration = .zero) -> ReplyWaiter {
        ReplyWaiter(deadline: configuration.requestTimeout.map { .now() + ($0 + extraTime).dispatchInterval }, handler)
    }

    /// Keeps `waiter`'s deadline; call with the lock held, once its request is enqueued.
    func watchDeadline(of waiter: ReplyWaiter, in state: inout State) {
        guard let deadline = waiter.deadline else { return }
        state.deadlines.append(waiter)
        if !state.isDeadlineCheckScheduled {
            state.isDeadlineCheckScheduled = true
            scheduleDeadlineCheck(at: deadline)
        }
    }

    private func scheduleDeadlineCheck(at deadline: DispatchTime) {
        // A global queue, not the cooperative pool: no task needs to run for a caller to be told.
        DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in self?.expireOverdueRequests() }
    }

    /// Tells every caller whose deadline has passed that it timed out.
    private func expireOverdueRequests() {
        let now = DispatchTime.now()
        let (sent, withdrawn) = state.withLock { state -> ([ReplyWaiter], [ReplyWaiter]) in
            var overdue: [ReplyWaiter] = []
            while let first = state.deadlines.first {
                if first.hasSettled {
                    state.deadlines.removeFirst()
                    continue
                }
                guard let deadline = first.deadline, deadline <= now else { break }
                overdue.append(state.deadlines.removeFirst())
            }
            if let next = state.deadlines.first?.deadline {
                scheduleDeadlineCheck(at: next)
            } else {
                state.isDeadlineCheckScheduled = false
            }
            guard !overdue.isEmpty, !state.backlog.isEmpty else { return (overdue, []) }
            // Not written yet: withdraw them, so that they are never sent.
            let unsent = Set(overdue.map(ObjectIdentifier.init))
            var withdrawn: [ReplyWaiter] = []
            state.backlog.removeAll { request in
                guard case .caller(let waiter) = request.reply, unsent.contains(ObjectIdentifier(waiter)) else {
                    return false
                }
                withdrawn.append(waiter)
                return true
            }
            let withdrawnSet = Set(withdrawn.map(ObjectIdentifier.init))
            return (overdue.filter { !withdrawnSet.contains(ObjectIdentifier($0)) }, withdrawn)
        }
        let timeout = configuration.requestTimeout ?? .zero
        for waiter in sent {
            waiter.fail(KVOClientError(.timedOut, "kvod did not answer within \(timeout); "
                                           + "the request may or may not have been applied"))
        }
        for waiter in withdrawn {
            waiter.fail(KVOClientError(.timedOut, "kvod could not be reached within \(timeout); "
                                           + "the request was not sent"))
        }
    }
}
