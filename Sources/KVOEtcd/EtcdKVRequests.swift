import KVOValues

/// A read of a key or range: etcd's `RangeRequest`.
public struct EtcdRangeRequest: Sendable, Equatable {
    public var range: EtcdKeyRange
    /// Read at this revision (0: the newest).
    public var revision: Int64
    /// At most this many keys (0: no limit).
    public var limit: Int64
    /// The keys and their revisions without their values.
    public var keysOnly: Bool
    /// Sorted by `mod_revision`, newest first: with `limit` 1, the key the
    /// range changed last (etcd's `sort_target` MOD, `sort_order` DESCEND).
    public var newestFirst: Bool

    public init(_ range: EtcdKeyRange, revision: Int64 = 0, limit: Int64 = 0, keysOnly: Bool = false,
                newestFirst: Bool = false) {
        self.range = range
        self.revision = revision
        self.limit = limit
        self.keysOnly = keysOnly
        self.newestFirst = newestFirst
    }

    var json: JSONValue {
        var members: JSONObject = ["key": .bytes(range.key)]
        if !range.rangeEnd.isEmpty { members["range_end"] = .bytes(range.rangeEnd) }
        if revision != 0 { members["revision"] = .int64(revision) }
        if limit != 0 { members["limit"] = .int64(limit) }
        if keysOnly { members["keys_only"] = true }
        if newestFirst {
            members["sort_target"] = "MOD"
            members["sort_order"] = "DESCEND"
        }
        return .object(members)
    }
}

/// A write of one key: etcd's `PutRequest`.
public struct EtcdPutRequest: Sendable, Equatable {
    public var key: [UInt8]
    public var value: [UInt8]
    /// Attach the key to this lease (0: none); the lease's end deletes it.
    public var lease: Int64
    /// Answer with the key as it was before.
    public var prevKV: Bool

    public init(key: [UInt8], value: [UInt8], lease: Int64 = 0, prevKV: Bool = false) {
        self.key = key
        self.value = value
        self.lease = lease
        self.prevKV = prevKV
    }

    var json: JSONValue {
        var members: JSONObject = ["key": .bytes(key), "value": .bytes(value)]
        if lease != 0 { members["lease"] = .int64(lease) }
        if prevKV { members["prev_kv"] = true }
        return .object(members)
    }
}

/// A deletion of a key or range: etcd's `DeleteRangeRequest`.
public struct EtcdDeleteRequest: Sendable, Equatable {
    public var range: EtcdKeyRange
    /// Answer with the deleted keys as they were.
    public var prevKV: Bool

    public init(_ range: EtcdKeyRange, prevKV: Bool = false) {
        self.range = range
        self.prevKV = prevKV
    }

    var json: JSONValue {
        var members: JSONObject = ["key": .bytes(range.key)]
        if !range.rangeEnd.isEmpty { members["range_end"] = .bytes(range.rangeEnd) }
        if prevKV { members["prev_kv"] = true }
        return .object(members)
    }
}
