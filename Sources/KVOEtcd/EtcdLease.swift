import KVOValues

/// A lease etcd granted, or renewed: its id and the seconds it has left.
public struct EtcdLease: Sendable, Equatable {
    public var header: EtcdResponseHeader
    public var id: Int64
    /// Seconds left; a renewal of a lease that no longer exists answers 0 or less.
    public var ttl: Int64

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        id = try json.int64("ID")
        ttl = try json.int64("TTL")
    }
}

/// What a member says of itself: etcd's `StatusResponse`, the fields a client needs.
public struct EtcdStatus: Sendable, Equatable {
    public var header: EtcdResponseHeader
    public var version: String
    /// The member id of the leader this member knows, 0 if none.
    public var leader: UInt64
    public var raftTerm: UInt64

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        version = json.member("version").flatMap { if case .string(let text) = $0 { text } else { nil } } ?? ""
        leader = try UInt64(bitPattern: EtcdResponseHeader.uint64(json, "leader"))
        raftTerm = try UInt64(bitPattern: EtcdResponseHeader.uint64(json, "raftTerm"))
    }
}
