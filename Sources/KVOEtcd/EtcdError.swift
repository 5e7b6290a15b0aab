/// Why an etcd request did not get an answer.
public enum EtcdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No endpoint could be reached, or the connection failed mid-request:
    /// `detail` is libcurl's message. A request that failed after it was sent
    /// may or may not have been applied (`mayHaveApplied`).
    case unreachable(endpoint: String, detail: String, mayHaveApplied: Bool)
    /// etcd (through its JSON gateway) refused the request: its gRPC status
    /// code (14, Unavailable, during an election) and message.
    case server(code: Int, message: String)
    /// The response, or one watch message, was larger than the client's
    /// `maxResponseBytes`.
    case responseTooLarge(limit: Int)
    /// The gateway answered something this client cannot read.
    case malformedResponse(String)
    /// The client was given endpoints it cannot use.
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .unreachable(let endpoint, let detail, let mayHaveApplied):
            "etcd at \(endpoint) unreachable: \(detail)\(mayHaveApplied ? " (the request may have been applied)" : "")"
        case .server(let code, let message): "etcd refused the request (gRPC code \(code)): \(message)"
        case .responseTooLarge(let limit): "etcd's response is larger than maxResponseBytes (\(limit) bytes)"
        case .malformedResponse(let detail): "etcd's response cannot be read: \(detail)"
        case .invalidConfiguration(let detail): detail
        }
    }

    /// etcd's gRPC code for a member without a leader or a leader that changed.
    public static let unavailableCode = 14
    /// gRPC's code for a request that ran out of time in etcd.
    public static let deadlineExceededCode = 4

    /// Whether a write that failed so may have been applied all the same: it
    /// was sent and the answer did not come (a broken connection, a timeout),
    /// or etcd gave up waiting for it (`request timed out`, `leader changed`:
    /// the proposal may be in the log), or its answer could not be read.
    /// Only a request that was never sent, or one etcd refused outright (a
    /// member without a leader among them), was not.
    public var mayHaveBeenApplied: Bool {
        switch self {
        case .unreachable(_, _, let mayHaveApplied): mayHaveApplied
        case .server(let code, let message):
            // `no leader`: the member refused to propose it.
            (code == Self.unavailableCode && !message.hasSuffix("no leader")) || code == Self.deadlineExceededCode
        case .responseTooLarge, .malformedResponse: true
        case .invalidConfiguration: false
        }
    }

    /// Whether etcd refused a read at a revision that compaction discarded
    /// (gRPC code 11, OutOfRange, which a future revision also gets).
    public var isCompactedRevision: Bool {
        guard case .server(11, let message) = self else { return false }
        return message.contains("compacted")
    }
}
