import KVOValues

/// The answer to a range: etcd's `RangeResponse`.
public struct EtcdRangeResponse: Sendable, Equatable {
    public var header: EtcdResponseHeader
    public var kvs: [EtcdKeyValue]
    /// More keys matched than `limit` let through.
    public var more: Bool
    /// How many keys matched.
    public var count: Int64

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        kvs = try json.list("kvs").map { kv throws(EtcdError) in try EtcdKeyValue(kv) }
        more = json.flag("more")
        count = try json.int64("count")
    }
}

/// The answer to a put: etcd's `PutResponse`.
public struct EtcdPutResponse: Sendable, Equatable {
    public var header: EtcdResponseHeader
    /// The key before the put, when asked for and it existed.
    public var prevKV: EtcdKeyValue?

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        prevKV = try json.member("prev_kv").map { kv throws(EtcdError) in try EtcdKeyValue(kv) }
    }
}

/// The answer to a deletion: etcd's `DeleteRangeResponse`.
public struct EtcdDeleteResponse: Sendable, Equatable {
    public var header: EtcdResponseHeader
    public var deleted: Int64
    public var prevKVs: [EtcdKeyValue]

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        deleted = try json.int64("deleted")
        prevKVs = try json.list("prev_kvs").map { kv throws(EtcdError) in try EtcdKeyValue(kv) }
    }
}
