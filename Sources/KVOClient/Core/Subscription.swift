/// Where a subscription's changes go: a ``ChangeStream``'s continuation or a
/// ``KVOController``'s queue.
///
/// Called on the connection's reader thread, outside its lock, in the order
/// the daemon sent the events. Must not block: hand the change on and return.
protocol ChangeSink: AnyObject, Sendable {
    func deliver(_ change: Change)
    /// The subscription ended without being unsubscribed (the daemon refused
    /// it, or the connection broke or was closed). Called at most once, and
    /// nothing is delivered after it.
    func finish(_ error: KVOClientError)
}

/// An (object, key path) pair: the unit the daemon observes per connection.
struct ObservationKey: Hashable, Sendable {
    var object: String
    var keyPath: String
}

/// One local observer of one (object, key path): a stream, or one
/// observation of a ``KVOController``. Several may share one daemon
/// observation (``ObservationEntry``).
///
/// @unchecked Sendable: `phase` is read and written only under the
/// connection's lock (``ConnectionCore``); everything else is immutable.
final class Subscription: @unchecked Sendable {
    enum Phase: Equatable {
        /// Waiting for the reply to the `observe` that registers its entry;
        /// `wantsInitialEvent`: the initial event that request asked for is still owed to it.
        case awaitingRegistration(wantsInitialEvent: Bool)
        /// Waiting for the reply to the `get` that supplies its initial change.
        case awaitingInitialValue
        /// Receiving every change.
        case live
        /// Unsubscribed or failed; receives nothing more.
        case ended
    }

    let key: ObservationKey
    let options: ObservationOptions
    let context: JSONValue?
    let sink: any ChangeSink
    var phase: Phase

    init(key: ObservationKey, options: ObservationOptions, context: JSONValue?, sink: any ChangeSink, phase: Phase) {
        self.key = key
        self.options = options
        self.context = context
        self.sink = sink
        self.phase = phase
    }
}
