/// Answers made without etcd, by a backend that answers in its place
/// (KVOCluster's tests keep one in memory).
extension EtcdResponseHeader {
    /// A header at `revision`, from member `memberID` of cluster `clusterID`, in raft term `raftTerm`.
    public init(clusterID: UInt64 = 0, memberID: UInt64 = 0, revision: Int64, raftTerm: UInt64 = 0) {
        self.clusterID = clusterID
        self.memberID = memberID
        self.revision = revision
        self.raftTerm = raftTerm
    }
}

extension EtcdRangeResponse {
    /// The keys a range found; `count` the keys matched (by default as many as `kvs`).
    public init(header: EtcdResponseHeader, kvs: [EtcdKeyValue], more: Bool = false, count: Int64? = nil) {
        self.header = header
        self.kvs = kvs
        self.more = more
        self.count = count ?? Int64(kvs.count)
    }
}

extension EtcdPutResponse {
    /// A put's answer, with the key before when asked for.
    public init(header: EtcdResponseHeader, prevKV: EtcdKeyValue? = nil) {
        self.header = header
        self.prevKV = prevKV
    }
}

extension EtcdDeleteResponse {
    /// A deletion's answer: how many keys went, and which when asked for.
    public init(header: EtcdResponseHeader, deleted: Int64, prevKVs: [EtcdKeyValue] = []) {
        self.header = header
        self.deleted = deleted
        self.prevKVs = prevKVs
    }
}

extension EtcdTxnResponse {
    /// A `Txn`'s answer: whether its compares held, and one answer per operation of the branch that ran.
    public init(header: EtcdResponseHeader, succeeded: Bool, responses: [EtcdResponseOp]) {
        self.header = header
        self.succeeded = succeeded
        self.responses = responses
    }
}

extension EtcdWatchEvent {
    /// One change of a key, as a watch tells it.
    public init(kind: Kind, kv: EtcdKeyValue, prevKV: EtcdKeyValue? = nil) {
        self.kind = kind
        self.kv = kv
        self.prevKV = prevKV
    }
}

extension EtcdLease {
    /// A lease granted or renewed, with the seconds it has left.
    public init(header: EtcdResponseHeader, id: Int64, ttl: Int64) {
        self.header = header
        self.id = id
        self.ttl = ttl
    }
}

extension EtcdStatus {
    /// What a member says of itself: the leader it knows (0: none) and the raft term.
    public init(header: EtcdResponseHeader, version: String = "", leader: UInt64, raftTerm: UInt64) {
        self.header = header
        self.version = version
        self.leader = leader
        self.raftTerm = raftTerm
    }
}
