import DequeModule

/// The books of a connection's acknowledgements (docs/PROTOCOL.md,
/// "Acknowledgements and `await`"): which changes of its ack observations
/// were delivered and not yet handled, and what was acked.
///
/// kvod takes one cumulative ack per connection: "every event up to seq N
/// has been handled". So the connection may ack up to just below the oldest
/// change still unhandled by any of its ack subscriptions, and, when none
/// is, up to the newest seq it has seen (every event before it arrived
/// before it). Each subscription handles its changes in delivery order, so
/// a FIFO per subscription suffices.
///
/// Kept in ``ConnectionCore/State``: used under the connection's lock.
struct AckLedger {
    /// Per ack subscription with changes in hand, their seqs in delivery order.
    private var unhandled: [ObjectIdentifier: Deque<UInt64>] = [:]
    /// The highest seq acked on the current socket.
    var sent: UInt64 = 0
    /// Whether an ack of the connection's own is awaiting its reply: at most
    /// one is, so that a fast stream of changes costs a few acks, not one each.
    var isInFlight = false

    /// A change with `seq` went to `subscription`.
    mutating func delivered(_ seq: UInt64, to subscription: Subscription) {
        unhandled[ObjectIdentifier(subscription), default: []].append(seq)
    }

    /// `subscription` has handled its oldest change in hand.
    mutating func handled(by subscription: Subscription) {
        let key = ObjectIdentifier(subscription)
        guard var seqs = unhandled[key] else { return }
        seqs.removeFirst()
        unhandled[key] = seqs.isEmpty ? nil : seqs
    }

    /// `subscription` ended: what it had in hand will never be handled, nor wait.
    mutating func forget(_ subscription: Subscription) {
        unhandled[ObjectIdentifier(subscription)] = nil
    }

    /// A new socket: kvod counts acks per connection, from none.
    mutating func restart() {
        sent = 0
        isInFlight = false
    }

    /// The seq everything up to which has been handled, given `latestSeq`,
    /// the newest seq the connection has seen.
    func handledThrough(latestSeq: UInt64) -> UInt64 {
        guard let oldest = unhandled.values.compactMap(\.first).min() else { return latestSeq }
        return oldest - 1
    }

    /// The seq to ack now, if an ack is due and none is in flight; marks it sent.
    mutating func nextAck(latestSeq: UInt64) -> UInt64? {
        guard !isInFlight else { return nil }
        let through = handledThrough(latestSeq: latestSeq)
        guard through > sent else { return nil }
        sent = through
        isInFlight = true
        return through
    }
}
