import KVOValues

/// One condition of a transaction: etcd's `Compare`, with its result
/// `EQUAL`, the only one kvod asks for.
public struct EtcdCompare: Sendable, Equatable {
    /// What is compared, with the value it is compared to.
    public enum Target: Sendable, Equatable {
        case version(Int64)
        case modRevision(Int64)
        case value([UInt8])
    }

    public var range: EtcdKeyRange
    public var target: Target

    public init(_ range: EtcdKeyRange, _ target: Target) {
        self.range = range
        self.target = target
    }

    /// The key's `mod_revision` is `revision` (0: the key does not exist).
    public static func modRevision(of key: String, is revision: Int64) -> Self {
        Self(.key(key), .modRevision(revision))
    }

    var json: JSONValue {
        var members: JSONObject = ["key": .bytes(range.key), "result": "EQUAL"]
        if !range.rangeEnd.isEmpty { members["range_end"] = .bytes(range.rangeEnd) }
        switch target {
        case .version(let version): members["target"] = "VERSION"; members["version"] = .int64(version)
        case .modRevision(let revision): members["target"] = "MOD"; members["mod_revision"] = .int64(revision)
        case .value(let value): members["target"] = "VALUE"; members["value"] = .bytes(value)
        }
        return .object(members)
    }
}

/// One operation of a transaction's branch: etcd's `RequestOp`.
public enum EtcdRequestOp: Sendable, Equatable {
    case range(EtcdRangeRequest)
    case put(EtcdPutRequest)
    case delete(EtcdDeleteRequest)

    var json: JSONValue {
        switch self {
        case .range(let request): ["request_range": request.json]
        case .put(let request): ["request_put": request.json]
        case .delete(let request): ["request_delete_range": request.json]
        }
    }
}

/// The answer to one operation of the branch that ran: etcd's `ResponseOp`.
public enum EtcdResponseOp: Sendable, Equatable {
    case range(EtcdRangeResponse)
    case put(EtcdPutResponse)
    case delete(EtcdDeleteResponse)

    init(_ json: JSONValue) throws(EtcdError) {
        if let range = json.member("response_range") {
            self = .range(try EtcdRangeResponse(range))
        } else if let put = json.member("response_put") {
            self = .put(try EtcdPutResponse(put))
        } else if let delete = json.member("response_delete_range") {
            self = .delete(try EtcdDeleteResponse(delete))
        } else {
            throw .malformedResponse("a transaction's response names no operation")
        }
    }
}

/// An atomic if-then-else: etcd's `TxnRequest`. All compares hold: `success`
/// runs; otherwise `failure`. Either way in one revision.
public struct EtcdTxnRequest: Sendable, Equatable {
    public var compare: [EtcdCompare]
    public var success: [EtcdRequestOp]
    public var failure: [EtcdRequestOp]

    public init(compare: [EtcdCompare], success: [EtcdRequestOp], failure: [EtcdRequestOp] = []) {
        self.compare = compare
        self.success = success
        self.failure = failure
    }
}

/// The answer to a transaction: etcd's `TxnResponse`.
public struct EtcdTxnResponse: Sendable, Equatable {
    public var header: EtcdResponseHeader
    /// Whether every compare held (and `success` ran).
    public var succeeded: Bool
    /// One answer per operation of the branch that ran.
    public var responses: [EtcdResponseOp]

    init(_ json: JSONValue) throws(EtcdError) {
        header = try EtcdResponseHeader(json.member("header"))
        succeeded = json.flag("succeeded")
        responses = try json.list("responses").map { response throws(EtcdError) in try EtcdResponseOp(response) }
    }
}
