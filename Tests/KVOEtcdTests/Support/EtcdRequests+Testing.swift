import KVOValues
@testable import KVOEtcd

/// Shorthands only the tests use: requests written as strings, a transaction
/// as the `JSONValue` its body must equal, and who leads.
extension EtcdPutRequest {
    init(_ key: String, _ value: String, lease: Int64 = 0, prevKV: Bool = false) {
        self.init(key: Array(key.utf8), value: Array(value.utf8), lease: lease, prevKV: prevKV)
    }
}

extension EtcdTxnRequest {
    var json: JSONValue {
        .object([
            "compare": .array(compare.map(\.json)),
            "success": .array(success.map(\.json)),
            "failure": .array(failure.map(\.json)),
        ])
    }
}

extension EtcdStatus {
    /// Whether the member that answered is the leader.
    var isLeader: Bool { leader != 0 && leader == header.memberID }
}
