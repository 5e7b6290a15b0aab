import KVOEngine

/// What to do with the reply to a request in flight. Replies come in request
/// order, so the connection keeps these in a FIFO and pops one per reply.
enum PendingReply: Sendable {
    /// A caller awaits it; called on the reader thread.
    case caller(@Sendable (Result<JSONObject, KVOClientError>) -> Void)
    /// A raw line's reply, as the text kvod sent (``KVOConnection/sendRaw(_:onReply:)``).
    case raw(@Sendable (Result<String, KVOClientError>) -> Void)
    /// The `observe` that registers `entry`; `initialFor` gets the initial event it asked for.
    case registration(ObservationEntry, initialFor: Subscription?)
    /// The `get` that supplies `subscription`'s initial change.
    case initialValue(Subscription)
    /// An `unobserve`: nothing waits for it.
    case discard

    /// Tells a waiting caller that no reply will come. The connection's own
    /// requests are settled by the connection itself.
    func fail(_ error: KVOClientError) {
        switch self {
        case .caller(let done): done(.failure(error))
        case .raw(let done): done(.failure(error))
        case .registration, .initialValue, .discard: break
        }
    }
}
