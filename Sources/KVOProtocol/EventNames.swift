/// What an event line's `event` says it is (docs/PROTOCOL.md, "Events").
public enum EventType: String, CaseIterable, Sendable {
    /// A change reached an observation.
    case change
}

/// An event's `kind`: KVO's four kinds of change.
public enum EventKind: String, CaseIterable, Sendable {
    /// The value was set (or replaced as a whole, or deleted).
    case setting
    /// Elements were inserted into an array; the event carries `indexes`.
    case insertion
    /// Elements were removed from an array; the event carries `indexes`.
    case removal
    /// Elements of an array were replaced; the event carries `indexes`.
    case replacement
}

/// An event's `cause`: why kvod itself removed a value that had a lifetime.
public enum EventCause: String, CaseIterable, Sendable {
    /// The value's owner connection closed (or was gone when kvod started).
    case disconnect
    /// The value's `ttl` passed.
    case ttl
}
