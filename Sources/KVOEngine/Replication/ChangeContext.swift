import KVOValues

/// What a replicated change record tells beside the change itself: who made
/// it (the client's uid, the kvod's host), why (`cause`, for kvod's own
/// deletions: etcd cannot tell a lease's expiry from a delete, its issue
/// #5487), and the lifetime a `set` gave its value, so that every kvod knows
/// the value is leased. Every member is optional in the record: a reader takes
/// what it finds and ignores the rest, so older and newer kvods read each
/// other's records.
public struct ChangeContext: Sendable, Equatable {
    /// Why kvod made the change itself; nil: a client's op.
    public var cause: ChangeCause?
    /// The uid of the client that made it (`SO_PEERCRED`); nil: unknown, or kvod's own.
    public var uid: UInt32?
    /// The host name of the kvod that committed it.
    public var host: String?
    /// The `ephemeral` and `ttl` of the set that made it.
    public var lifetime: ValueLifetime?
    /// With a `ttl`: when the store's lease ends the value, in wall-clock
    /// seconds since 1970, as the kvod that had the lease granted reckoned
    /// it (the grant's answer plus the ttl the store granted): what `get`'s
    /// `expiresIn` counts down to on every kvod.
    public var expires: Double?
    /// The token of a change whose writer awaits its observers (`await`): the
    /// kvod that proposed it knows it by this when its watch delivers it
    /// (``PendingProposals/awaited``); other kvods ignore it.
    public var awaitID: UInt64?
    /// The proposal that wrote it, unique among the proposals of the kvod
    /// that sent it: when etcd's answer to a `Txn` is lost, that kvod learns
    /// from its watch whether the `Txn` was applied by finding it
    /// (docs/CLUSTER.md, "When etcd's answer is lost"); other kvods ignore it.
    public var proposal: UInt64?

    public init(cause: ChangeCause? = nil, uid: UInt32? = nil, host: String? = nil, lifetime: ValueLifetime? = nil,
                expires: Double? = nil) {
        self.cause = cause
        self.uid = uid
        self.host = host
        self.lifetime = lifetime
        self.expires = expires
    }

    /// Adds the members known to a stored record.
    public func write(to members: inout JSONObject) {
        if let cause { members["cause"] = .string(cause.rawValue) }
        if let uid { members["uid"] = .number(JSONNumber(Int(uid))) }
        if let host { members["host"] = .string(host) }
        if let lifetime {
            if lifetime.ephemeral { members["ephemeral"] = .bool(true) }
            if let ttl = lifetime.ttl { members["ttl"] = .number(JSONNumber(validatedLiteral: String(ttl))) }
        }
        if let awaitID { members["await"] = .string(String(awaitID, radix: 16)) }
        if let proposal { members["proposal"] = .string(String(proposal, radix: 16)) }
        if let expires { members["expires"] = .number(JSONNumber(validatedLiteral: String(expires))) }
    }

    /// Reads them from a stored record, leniently: a member of another type is left out.
    init(_ record: JSONValue) {
        if case .string(let name)? = record.member("cause") { cause = ChangeCause(rawValue: name) }
        if case .number(let number)? = record.member("uid") { uid = UInt32(number.literal) }
        if case .string(let name)? = record.member("host") { host = name }
        var lifetime = ValueLifetime()
        if case .bool(true)? = record.member("ephemeral") { lifetime.ephemeral = true }
        if case .number(let number)? = record.member("ttl"), let seconds = Double(number.literal), seconds > 0 {
            lifetime.ttl = seconds
        }
        if lifetime.ephemeral || lifetime.ttl != nil { self.lifetime = lifetime }
        if case .string(let token)? = record.member("await") { awaitID = UInt64(token, radix: 16) }
        if case .string(let token)? = record.member("proposal") { proposal = UInt64(token, radix: 16) }
        if case .number(let number)? = record.member("expires"), let seconds = number.doubleValue, seconds > 0 {
            expires = seconds
        }
    }
}
