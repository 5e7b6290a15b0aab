/// Answers made without etcd, by a backend that answers in its place
/// (KVOCluster's tests keep one in memory).
extension EtcdResponseHeader {
    public init(clusterID: UInt64 = 0, memberID: UInt64 = 0, revision: Int64, raftTerm: UInt64 = 0) {
        self.clusterID = clusterID
        self.memberID = memberID
        self.revision = revision
        self.raftTerm = raftTerm
    }
}

extension EtcdRangeResponse {
    public init(header: EtcdResponseHeader, kvs: [EtcdKeyValue], more: Bool = false, count: Int64? = nil) {
        self.header = header
        self.kvs = kvs
        self.more = more
        self.count = count ?? Int64(kvs.count)
    }
}

extension EtcdPutResponse {
    public init(header: EtcdResponseHeader, prevKV: EtcdKeyValue? = nil) {
        self.header = header
        self.prevKV = prevKV
    }
}

extension EtcdDeleteResponse {
    public init(header: EtcdResponseHeader, deleted: Int64, prevKVs: [EtcdKeyValue] = []) {
        self.header = header
        self.deleted = deleted
        self.prevKVs = prevKVs
    }
}

extension EtcdTxnResponse {
    public init(header: EtcdResponseHeader, succeeded: Bool, responses: [EtcdResponseOp]) {
        self.header = header
        self.succeeded = succeeded
        self.responses = responses
    }
}

extension EtcdWatchEvent {
    public init(kind: Kind, kv: EtcdKeyValue, prevKV: EtcdKeyValue? = nil) {
        self.kind = kind
        self.kv = kv
        self.prevKV = prevKV
    }
}

extension EtcdLease {
    public init(header: EtcdResponseHeader, id: Int64, ttl: Int64) {
        self.header = header
        self.id = id
        self.ttl = ttl
    }
}

extension EtcdStatus {
    public init(header: EtcdResponseHeader, version: String = "", leader: UInt64, raftTerm: UInt64) {
        self.header = header
        self.version = version
        self.leader = leader
        self.raftTerm = raftTerm
    }
}
