/// Acknowledgements and `await` (issue 15): the `ack` op, a change whose
/// reply waits for its observers, and the deadlines of those waits, which
/// the daemon drives (the engine has no clock of its own for them).
extension Engine {
    /// `ack`: `client` has handled every event up to `seq`. A seq after the
    /// current one is refused: only changes that happened can be handled.
    func acknowledge(_ seq: UInt64, from client: ClientController) throws(KVOEngineError) {
        guard seq <= store.seq else {
            throw .badRequest("field \"seq\" is \(seq), after the current seq \(store.seq): "
                + "only changes that happened can be acknowledged")
        }
        client.acknowledge(seq)
    }

    /// Performs a change with `await`: applied and notified as any other;
    /// its reply waits, unless nothing is due (or every observer is settled
    /// already). Errors are replied at once by the caller.
    func performAwaited(_ request: Request, _ awaiting: ChangeAwait, for client: ClientController,
                        reply: ReplyEncoder) throws(KVOEngineError) {
        var reply = reply
        let collector = AwaitCollector(writer: client, condition: awaiting.condition)
        shared.awaitCollector = collector
        defer { shared.awaitCollector = nil }
        try perform(request.operation, lifetime: request.lifetime, for: client, reply: &reply)
        shared.awaitCollector = nil
        startWait(id: request.id, awaiting, of: client, reply: reply, seq: store.seq, for: collector)
    }

    /// Makes `client`'s reply wait for the observations `collector` gathered
    /// while its change (at `seq`) was dispatched, until the await's timeout
    /// from now; `then` runs once the reply went.
    func startWait(id: RequestID?, _ awaiting: ChangeAwait, of client: ClientController, reply: ReplyEncoder,
                   seq: UInt64, for collector: AwaitCollector, then: (() -> Void)? = nil) {
        let deadline = configuration.throttleClock() + UInt64(awaiting.timeout)
        let wait = ChangeWait(writer: client, id: id, reply: reply, seq: seq, awaiting: awaiting, deadline: deadline)
        wait.then = then
        client.pendingWait = wait
        shared.awaitSchedule.add(wait)
        collector.fill(wait)
        if wait.isSettled { shared.awaitSchedule.finish(wait, timedOut: false) }
    }

    /// When the next writer's wait times out, in milliseconds on the
    /// configuration's monotonic clock; nil: no writer waits.
    public var nextAwaitDeadline: UInt64? { shared.awaitSchedule.nextDeadline }

    /// Ends the waits due at `now`: each writer gets the error `timeout`
    /// with the counts so far (its change stays applied).
    public func expireAwaits(at now: UInt64) {
        shared.awaitSchedule.expire(at: now)
    }
}
