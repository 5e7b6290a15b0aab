import KVOProtocol

/// Why kvod itself deleted a value (docs/PROTOCOL.md, "Events of kvod's own
/// deletions"): the event is an ordinary `setting` with `new` = `null`, and
/// ``Change/cause`` tells a departure from a deliberate delete.
///
/// A struct, not an enum, so later causes do not break callers.
public struct ChangeCause: Sendable, Hashable, CustomStringConvertible {
    /// The spelling on the wire, e.g. `disconnect`.
    public let rawValue: String
    /// A cause by its spelling; the named ones below are those kvod sends.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The spelling on the wire.
    public var description: String { rawValue }

    /// The connection that owned an ephemeral value closed.
    public static let disconnect = ChangeCause(EventCause.disconnect.rawValue)
    /// The value's `ttl` passed.
    public static let ttl = ChangeCause(EventCause.ttl.rawValue)
}
