import KVOEngine

/// The reply to `info`: the daemon's version and counters.
public struct DaemonInfo: Sendable, Hashable {
    public var version: String
    /// Seconds since the daemon started.
    public var uptime: Int
    /// Connected clients, this one included.
    public var connections: Int
    /// Observations held, over all connections.
    public var observations: Int
    /// Objects (documents) stored.
    public var objects: Int
    /// The seq of the latest change.
    public var seq: UInt64

    init?(_ reply: JSONObject) {
        guard case .string(let version)? = reply["version"],
              let uptime = Self.integer(reply["uptime"]), let connections = Self.integer(reply["connections"]),
              let observations = Self.integer(reply["observations"]), let objects = Self.integer(reply["objects"]),
              case .number(let seq)? = reply["seq"], let seqValue = UInt64(seq.literal)
        else { return nil }
        self.version = version
        self.uptime = uptime
        self.connections = connections
        self.observations = observations
        self.objects = objects
        self.seq = seqValue
    }

    /// The info as the JSON object kvod sent (without `ok`).
    public var json: JSONValue {
        [
            "version": .string(version), "uptime": .number(JSONNumber(uptime)),
            "connections": .number(JSONNumber(connections)), "observations": .number(JSONNumber(observations)),
            "objects": .number(JSONNumber(objects)), "seq": .number(JSONNumber(validatedLiteral: String(seq))),
        ]
    }

    private static func integer(_ value: JSONValue?) -> Int? {
        if case .number(let number)? = value { number.intValue } else { nil }
    }
}
