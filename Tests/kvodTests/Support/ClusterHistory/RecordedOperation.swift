/// One request a history client made, as it went (``HistoryClient``): what it
/// asked of which object through which kvod, when it sent it and when the
/// answer came, and the answer. Values are the strings the clients wrote,
/// each written once in a run.
struct RecordedOperation: Sendable {
    /// A `set`'s condition, on the key path it writes.
    enum Condition: Sendable, Hashable {
        case modSeq(Int)
        case value(String)
    }

    /// One `set` of a key path of the object.
    struct Write: Sendable, Hashable {
        let path: String
        let value: String
        let condition: Condition?
    }

    enum Request: Sendable {
        /// A `set` (one write; pipelined sets are one request each) or a `batch` of them.
        case write(object: String, writes: [Write], isBatch: Bool)
        case get(object: String, path: String)
        /// A `get` of the whole document.
        case getAll(object: String)
    }

    enum Outcome: Sendable {
        case applied(seq: Int)
        /// `precondition_failed`.
        case conditionFailed
        /// `unavailable` saying nothing changed.
        case notApplied
        /// No answer (a timeout, a lost connection), or `unavailable` saying it may have been applied.
        case unknown(String)
        /// A `get`'s answer: the value (nil: absent), its modSeq, the seq it reflects, and `stale`.
        case value(String?, modSeq: Int?, seq: Int, stale: Bool)
        /// A whole document's `get`: each key path's value.
        case values([String: String], seq: Int, stale: Bool)
    }

    let client: Int
    let kvod: Int
    let request: Request
    let call: Double
    /// When the answer came; nil when the outcome is unknown.
    let returned: Double?
    let outcome: Outcome

    /// The same request with another outcome (a write of unknown outcome, as the streams tell it).
    func resolved(_ outcome: Outcome, returned: Double?) -> RecordedOperation {
        RecordedOperation(client: client, kvod: kvod, request: request, call: call, returned: returned, outcome: outcome)
    }

    var object: String {
        switch request {
        case .write(let object, _, _), .get(let object, _), .getAll(let object): object
        }
    }

    /// The seq a read reflects, or a write was applied at.
    var seq: Int? {
        switch outcome {
        case .applied(let seq), .value(_, _, let seq, _), .values(_, let seq, _): seq
        default: nil
        }
    }

    var isRead: Bool {
        if case .write = request { return false }
        return true
    }
}

extension RecordedOperation.Outcome {
    /// `unavailable`, whether it may have been applied or not.
    var isRefusal: Bool {
        switch self {
        case .notApplied, .unknown: true
        default: false
        }
    }

    /// A read answered `stale`: its kvod does not follow etcd.
    var isStale: Bool {
        switch self {
        case .value(_, _, _, let stale), .values(_, _, let stale): stale
        default: false
        }
    }
}
