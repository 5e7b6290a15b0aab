import KVOProtocol

/// Where a subscription's changes go: a ``ChangeStream``'s continuation or a
/// ``KVOController``'s queue.
///
/// Called on the connection's reader thread, outside its lock, in the order
/// the daemon sent the events. Must not block: hand the change on and return.
protocol ChangeSink: AnyObject, Sendable {
    /// Changes in the order kvod sent them, from one read. A change's
    /// `ticket`, for an observation that acknowledges: call its
    /// ``AckTicket/handled()`` once the observer is done with the change.
    func deliver(_ changes: [Delivered])
    /// The subscription ended without being unsubscribed (the daemon refused
    /// it, or the connection broke or was closed). Called at most once, and
    /// nothing is delivered after it.
    func finish(_ error: KVOClientError)
}

extension ChangeSink {
    /// One change on its own (initial changes, held ones).
    func deliver(_ change: Change, ticket: AckTicket?) { deliver([Delivered(change: change, ticket: ticket)]) }
}

/// An (object, key path) or (prefix, key path) pair: the unit the daemon
/// observes per connection. A nil key path is the whole document.
struct ObservationKey: Hashable, Sendable {
    /// The object's name, or the prefix when ``isPrefix``.
    var object: String
    var keyPath: String?
    /// Whether ``object`` is a prefix (every object whose name starts with it).
    var isPrefix = false

    /// `person/1 name`, `person/1 (whole document)`, `prefix services/ addr`: for messages.
    var description: String {
        (isPrefix ? "prefix \(object)" : object) + " " + (keyPath ?? "(whole document)")
    }

    /// The request `op` about this key: `"object":…` or `"prefix":…`, and the key path if any.
    func request(_ op: Op) -> RequestEncoder {
        var line = RequestEncoder(op: op)
        line.string(isPrefix ? .prefix : .object, object)
        if let keyPath { line.string(.keyPath, keyPath) }
        return line
    }
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
    /// Which changes kvod is to send; its entry's must be the same.
    let delivery: DeliveryOptions
    let context: JSONValue?
    let sink: any ChangeSink
    var phase: Phase

    init(key: ObservationKey, options: ObservationOptions, delivery: DeliveryOptions, context: JSONValue?,
         sink: any ChangeSink, phase: Phase) {
        self.key = key
        self.options = options
        self.delivery = delivery
        self.context = context
        self.sink = sink
        self.phase = phase
    }
}
