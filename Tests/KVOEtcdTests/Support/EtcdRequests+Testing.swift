import KVOValues
@testable import KVOEtcd

/// Shorthands only the tests use: requests written as strings, a transaction
/// as the `JSONValue` its body must equal, a watch event read from a parsed
/// message, who leads, the transfers in flight, and a put, a delete and a
/// compaction outside a `Txn`.
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

extension EtcdWatchEvent {
    /// The event as the watch read it from a parsed message before EtcdWatchMessage read it piece by piece.
    init(_ json: JSONValue) throws(EtcdError) {
        try self.init(kind: json.member("type") == .string("DELETE") ? .delete : .put,
                      kv: EtcdKeyValue(json.member("kv") ?? .object([:])),
                      prevKV: json.member("prev_kv").map { kv throws(EtcdError) in try EtcdKeyValue(kv) })
    }
}

extension EtcdStatus {
    /// Whether the member that answered is the leader.
    var isLeader: Bool { leader != 0 && leader == header.memberID }
}

extension EtcdClient {
    /// Requests and watches in flight.
    var activeTransfers: Int { multi.transfers.count }

    func put(_ request: EtcdPutRequest, _ done: @escaping (Result<EtcdPutResponse, EtcdError>) -> Void) {
        call("/kv/put", request.json.jsonBytes, parse: EtcdPutResponse.init, done)
    }

    func delete(_ request: EtcdDeleteRequest, _ done: @escaping (Result<EtcdDeleteResponse, EtcdError>) -> Void) {
        call("/kv/deleterange", request.json.jsonBytes, parse: EtcdDeleteResponse.init, done)
    }

    /// Discards the history before `revision`: watches from earlier revisions are then compacted.
    func compact(revision: Int64, _ done: @escaping (Result<EtcdResponseHeader, EtcdError>) -> Void) {
        call("/kv/compaction", JSONValue.object(["revision": .int64(revision)]).jsonBytes, parse: { json throws(EtcdError) in
            try EtcdResponseHeader(json.member("header"))
        }, done)
    }
}
