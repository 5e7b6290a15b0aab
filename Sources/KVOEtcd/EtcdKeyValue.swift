import KVOValues

/// The header of every etcd response: which cluster and member answered, and
/// the store's revision when it did.
public struct EtcdResponseHeader: Sendable, Equatable {
    public var clusterID: UInt64
    public var memberID: UInt64
    public var revision: Int64
    public var raftTerm: UInt64

    init(_ json: JSONValue?) throws(EtcdError) {
        let json = json ?? .object([:])
        // cluster and member ids are uint64: read through Int64's bit pattern.
        clusterID = try UInt64(bitPattern: Self.uint64(json, "cluster_id"))
        memberID = try UInt64(bitPattern: Self.uint64(json, "member_id"))
        revision = try json.int64("revision")
        raftTerm = try UInt64(bitPattern: Self.uint64(json, "raft_term"))
    }

    /// A uint64 field as its bit pattern (ids use the whole 64 bits).
    static func uint64(_ json: JSONValue, _ name: String) throws(EtcdError) -> Int64 {
        guard case .string(let text)? = json.member(name) else { return try json.int64(name) }
        guard let value = UInt64(text) else { throw .malformedResponse("\(name) is not a uint64: \(text)") }
        return Int64(bitPattern: value)
    }
}

/// One key as etcd stores it: bytes for key and value, and its revisions.
public struct EtcdKeyValue: Sendable, Equatable {
    public var key: [UInt8]
    public var value: [UInt8]
    /// The revision of the key's last creation.
    public var createRevision: Int64
    /// The revision of the key's last change.
    public var modRevision: Int64
    /// Changes since its creation (1 after the creation; 0 once deleted).
    public var version: Int64
    /// The lease the key is attached to, 0 if none.
    public var lease: Int64

    public init(key: [UInt8], value: [UInt8], createRevision: Int64 = 0, modRevision: Int64 = 0,
                version: Int64 = 0, lease: Int64 = 0) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }

    init(_ json: JSONValue) throws(EtcdError) {
        key = try json.bytes("key")
        value = try json.bytes("value")
        createRevision = try json.int64("create_revision")
        modRevision = try json.int64("mod_revision")
        version = try json.int64("version")
        lease = try json.int64("lease")
    }

    /// The key as text (keys kvod writes are UTF-8).
    public var keyText: String { String(decoding: key, as: UTF8.self) }
    /// The value as text.
    public var valueText: String { String(decoding: value, as: UTF8.self) }
}
