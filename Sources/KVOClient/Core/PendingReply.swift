import KVOValues

/// What to do with the reply to a request in flight. Replies come in request
/// order, so the connection keeps these in a FIFO and pops one per reply.
enum PendingReply: Sendable {
    /// A caller awaits it (the async API, or a raw line); told on the reader thread.
    case caller(ReplyWaiter)
    /// The `observe` that registers `entry`; `initialFor` gets the initial event it asked for.
    case registration(ObservationEntry, initialFor: Subscription?)
    /// The `get` that supplies `subscription`'s initial change.
    case initialValue(Subscription)
    /// An `ack` the connection sent by itself (at most one is in flight).
    case acknowledgement
    /// The `unobserve` that starts changing `entry`'s registered options; its
    /// reply sends the `observe` with the new ones (ConnectionCore+OptionsChange.swift).
    case optionsChange(ObservationEntry)
    /// An `unobserve`: nothing waits for it.
    case discard

    /// Tells a waiting caller that no reply will come. The connection's own
    /// requests are settled by the connection itself.
    func fail(_ error: KVOClientError) {
        switch self {
        case .caller(let waiter): waiter.fail(error)
        case .registration, .initialValue, .acknowledgement, .optionsChange, .discard: break
        }
    }
}
