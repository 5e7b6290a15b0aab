import KVOValues
import KVOProtocol

/// The reply to `info`: the daemon's version and counters.
public struct DaemonInfo: Sendable, Hashable {
    /// kvod's version: its nearest release tag (`0.2.0`, or `0.2.0+3` three
    /// commits after it), or `unknown`.
    public var version: String
    /// The commit kvod was built from (12 hex digits, or `unknown`); nil from
    /// a kvod that does not send it.
    public var commit: String?
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
    /// The oldest seq kvod still holds a change of, for `since`; the next seq
    /// when it holds none. A resume point older than `oldestSeq − 1` fails
    /// with `compacted`. nil from a kvod that does not send it.
    public var oldestSeq: UInt64?
    /// The history ``seq`` counts in (docs/PROTOCOL.md); nil from a kvod that does not send it.
    public var epoch: String?

    /// Now, as a point to resume from: observing with `since` set to it
    /// misses no change after this `info`.
    public var resumePoint: ResumePoint { ResumePoint(seq: seq, epoch: epoch) }
    /// Every member of the reply, also those this client does not know.
    private let reply: JSONObject

    init?(_ reply: JSONObject) {
        guard case .string(let version)? = reply[.version],
              let uptime = reply.integer(.uptime), let connections = reply.integer(.connections),
              let observations = reply.integer(.observations), let objects = reply.integer(.objects),
              let seq = reply.unsigned(.seq)
        else { return nil }
        self.version = version
        self.uptime = uptime
        self.connections = connections
        self.observations = observations
        self.objects = objects
        self.seq = seq
        self.reply = reply
        oldestSeq = reply.unsigned(.oldestSeq)
        if case .string(let epoch)? = reply[.epoch] { self.epoch = epoch }
        if case .string(let commit)? = reply[.commit] { self.commit = commit }
    }

    /// The info as the JSON object kvod sent (without `ok`), with members
    /// this client does not know kept in place.
    public var json: JSONValue {
        var members = reply
        members[.version] = .string(version)
        members[.uptime] = .number(JSONNumber(uptime))
        members[.connections] = .number(JSONNumber(connections))
        members[.observations] = .number(JSONNumber(observations))
        members[.objects] = .number(JSONNumber(objects))
        members[.seq] = .number(JSONNumber(validatedLiteral: String(seq)))
        if let oldestSeq { members[.oldestSeq] = .number(JSONNumber(validatedLiteral: String(oldestSeq))) }
        if let epoch { members[.epoch] = .string(epoch) }
        if let commit { members[.commit] = .string(commit) }
        return .object(members)
    }
}
