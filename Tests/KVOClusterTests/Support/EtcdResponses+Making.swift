@testable import KVOEtcd
import KVOValues

/// Answers made without etcd, for the etcd in memory (each starts from the
/// answer an empty JSON object reads as: an init of another module's struct
/// must go through one of its own).
extension EtcdResponseHeader {
    /// A header at `revision`, from member `memberID` of cluster `clusterID`, in raft term `raftTerm`.
    init(clusterID: UInt64 = 0, memberID: UInt64 = 0, revision: Int64, raftTerm: UInt64 = 0) {
        self = try! EtcdResponseHeader(.object([:]))
        self.clusterID = clusterID
        self.memberID = memberID
        self.revision = revision
        self.raftTerm = raftTerm
    }
}

extension EtcdRangeResponse {
    /// The keys a range found; `count` the keys matched (by default as many as `kvs`).
    init(header: EtcdResponseHeader, kvs: [EtcdKeyValue], more: Bool = false, count: Int64? = nil) {
        self = try! EtcdRangeResponse(.object([:]))
        self.header = header
        self.kvs = kvs
        self.more = more
        self.count = count ?? Int64(kvs.count)
    }
}

extension EtcdPutResponse {
    /// A put's answer, with the key before when asked for.
    init(header: EtcdResponseHeader, prevKV: EtcdKeyValue? = nil) {
        self = try! EtcdPutResponse(.object([:]))
        self.header = header
        self.prevKV = prevKV
    }
}

extension EtcdDeleteResponse {
    /// A deletion's answer: how many keys went, and which when asked for.
    init(header: EtcdResponseHeader, deleted: Int64, prevKVs: [EtcdKeyValue] = []) {
        self = try! EtcdDeleteResponse(.object([:]))
        self.header = header
        self.deleted = deleted
        self.prevKVs = prevKVs
    }
}

extension EtcdTxnResponse {
    /// A `Txn`'s answer: whether its compares held, and one answer per operation of the branch that ran.
    init(header: EtcdResponseHeader, succeeded: Bool, responses: [EtcdResponseOp]) {
        self = try! EtcdTxnResponse(.object([:]))
        self.header = header
        self.succeeded = succeeded
        self.responses = responses
    }
}

extension EtcdLease {
    /// A lease granted or renewed, with the seconds it has left.
    init(header: EtcdResponseHeader, id: Int64, ttl: Int64) {
        self = try! EtcdLease(.object([:]))
        self.header = header
        self.id = id
        self.ttl = ttl
    }
}

extension EtcdStatus {
    /// What a member says of itself: the leader it knows (0: none) and the raft term.
    init(header: EtcdResponseHeader, version: String = "", leader: UInt64, raftTerm: UInt64) {
        self = try! EtcdStatus(.object([:]))
        self.header = header
        self.version = version
        self.leader = leader
        self.raftTerm = raftTerm
    }
}
