import KVOValues
import KVOProtocol

/// One of this connection's observations as the daemon holds it (the reply to `observations`).
public struct ObservationRecord: Sendable, Hashable {
    /// The observed object's name; for a prefix observation, the prefix (see ``isPrefix``).
    public var object: String
    /// The observed key path; nil for an observation of the whole document.
    public var keyPath: String?
    /// Whether this is a prefix observation (``object`` is then the prefix).
    public var isPrefix: Bool
    /// The options kvod holds for it (KVOClient registers `new`, `old` and `prior`; see docs/CLIENT.md).
    public var options: ObservationOptions
    /// Which changes kvod sends it (`distinct`, `kinds`, `throttle`); ``DeliveryOptions/all`` when none is set.
    public var delivery: DeliveryOptions
    /// The context kvod holds for it (KVOClient keeps contexts on the client and sends none).
    public var context: JSONValue?
    /// How it fares; nil from a kvod that does not tell.
    public var health: ObservationHealth?

    /// The prefix of a prefix observation; nil for an observation of one object.
    public var prefix: String? { isPrefix ? object : nil }

    init?(_ value: JSONValue) {
        guard case .object(let members) = value, case .array(let names)? = members[.options] else { return nil }
        switch (members[.object], members[.prefix]) {
        case (.string(let object)?, nil): (self.object, isPrefix) = (object, false)
        case (nil, .string(let prefix)?): (self.object, isPrefix) = (prefix, true)
        default: return nil
        }
        switch members[.keyPath] {
        case .string(let keyPath)?: self.keyPath = keyPath
        case nil: keyPath = nil
        default: return nil
        }
        var options: ObservationOptions = []
        for name in names {
            guard case .string(let text) = name, let option = ObservationOptions(wireName: text) else { return nil }
            options.insert(option)
        }
        self.options = options
        guard let delivery = DeliveryOptions(record: members) else { return nil }
        self.delivery = delivery
        context = members[.context]
        health = ObservationHealth(members)
    }
}

/// How an observation fares, as kvod counts it (docs/PROTOCOL.md, `observations`); each
/// count is nil from a kvod that does not send it.
public struct ObservationHealth: Sendable, Hashable {
    /// Events written to this connection for it since it was made.
    public var eventsSent: UInt64?
    /// Its events dropped in favour of a later one that was sent (a throttle, a slow reader).
    public var eventsCoalesced: UInt64?
    /// The seq of the last event written for it; 0: none yet.
    public var lastSeqSent: UInt64?
    /// For an observation that acknowledges: the connection's highest acknowledged seq (0: none yet).
    public var lastAckedSeq: UInt64?

    /// nil when the record carries none of the counts.
    init?(_ members: JSONObject) {
        (eventsSent, eventsCoalesced) = (members.unsigned(.eventsSent), members.unsigned(.eventsCoalesced))
        (lastSeqSent, lastAckedSeq) = (members.unsigned(.lastSeqSent), members.unsigned(.lastAckedSeq))
        if eventsSent == nil && eventsCoalesced == nil && lastSeqSent == nil && lastAckedSeq == nil { return nil }
    }
}
