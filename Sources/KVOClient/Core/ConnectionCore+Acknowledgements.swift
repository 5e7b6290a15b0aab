import KVOValues
import KVOProtocol

/// A change of an observation that acknowledges, in a sink's hands: the
/// sink calls ``handled()`` once the observer is done with it (a block
/// returned, a stream's consumer asked for the next change).
///
/// Weak: a ticket waits in a stream's buffer, which the subscription's sink
/// keeps, so strong references would make a cycle that outlives the connection.
struct AckTicket: Sendable {
    weak var core: ConnectionCore?
    weak var subscription: Subscription?

    func handled() {
        guard let core, let subscription else { return }
        core.handled(by: subscription)
    }
}

/// Acknowledgements (docs/PROTOCOL.md, "Acknowledgements and `await`"): the
/// connection acks by itself, cumulatively, as its ack observers finish
/// their changes (the books: ``AckLedger``), with at most one ack of its own
/// in flight; ``acknowledgeHandled()`` acks at once and waits for kvod.
extension ConnectionCore {
    /// `subscription` has handled its oldest change in hand: ack what is now handled, unless an ack is in flight
    /// (its reply sends the next one).
    func handled(by subscription: Subscription) {
        state.withLock { state in
            state.acks.handled(by: subscription)
            sendDueAck(in: &state)
        }
    }

    /// kvod answered the connection's own ack: send the next one if more was handled meanwhile.
    func acknowledgementAnswered() {
        state.withLock { state in
            state.acks.isInFlight = false
            sendDueAck(in: &state)
        }
    }

    private func sendDueAck(in state: inout State) {
        guard state.isConnected, let seq = state.acks.nextAck(latestSeq: state.latestSeq) else { return }
        _ = enqueue(Self.ackLine(seq), .acknowledgement, in: &state)
    }

    /// Acks everything handled so far and returns once kvod has recorded it
    /// (replies come in order, so every earlier ack is recorded too).
    func acknowledgeHandled() async throws(KVOClientError) {
        var caller: ReplyWaiter?
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<JSONObject, KVOClientError>, Never>) in
            let waiter = self.waiter(.fields { continuation.resume(returning: $0) })
            caller = waiter
            let failure = state.withLock { state -> KVOClientError? in
                let through = max(state.acks.sent, state.acks.handledThrough(latestSeq: state.latestSeq))
                state.acks.sent = through
                let failure = enqueue(Self.ackLine(through), .caller(waiter), in: &state)
                if failure == nil { watchDeadline(of: waiter, in: &state) }
                return failure
            }
            if let failure { waiter.fail(failure) }
        }
        caller?.handOver()
        _ = try result.get()
    }

    private static func ackLine(_ seq: UInt64) -> [UInt8] {
        var line = RequestEncoder(op: .ack)
        line.integer(.seq, seq)
        return line.line
    }
}
