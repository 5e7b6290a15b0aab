import KVOProtocol

/// The HTTP status of each error code of the socket protocol (docs/HTTP.md's table).
public enum HTTPErrorStatus {
    public static func of(_ code: ErrorCode) -> Int {
        switch code {
        case .badJSON, .badRequest, .unknownOp, .notAnObject, .notAnArray, .indexOutOfRange: 400
        case .forbidden: 403
        case .notFound: 404
        case .compacted: 410
        case .preconditionFailed: 412
        case .tooLarge: 413
        case .limitExceeded: 429
        case .unavailable: 503
        case .timeout: 504
        case .storageFull: 507
        default: 500
        }
    }
}
