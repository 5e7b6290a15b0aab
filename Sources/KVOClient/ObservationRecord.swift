import KVOEngine

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

    /// The prefix of a prefix observation; nil for an observation of one object.
    public var prefix: String? { isPrefix ? object : nil }

    init?(_ value: JSONValue) {
        guard case .object(let members) = value, case .array(let names)? = members["options"] else { return nil }
        switch (members["object"], members["prefix"]) {
        case (.string(let object)?, nil): (self.object, isPrefix) = (object, false)
        case (nil, .string(let prefix)?): (self.object, isPrefix) = (prefix, true)
        default: return nil
        }
        switch members["keyPath"] {
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
        context = members["context"]
    }
}
