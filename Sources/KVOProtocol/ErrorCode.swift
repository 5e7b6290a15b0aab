/// The `code` of an error reply (docs/PROTOCOL.md, "Errors"): the one
/// error-code type of kvod, KVOClient and kvoctl (`KVOEngineError.Code` and
/// `KVOClientError.Code` are this type).
///
/// A struct, not an enum, so that the set can grow without breaking callers
/// and KVOClient can add its own codes (`cannot_connect`…) beside the
/// daemon's; ``allCases`` are the daemon's. Compare with the named codes:
/// `error.code == .notFound`.
public struct ErrorCode: RawRepresentable, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// The wire spelling, e.g. `not_found`.
    public let rawValue: String
    /// A code by its spelling.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A code by its spelling.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The spelling, as kvod sends it.
    public var description: String { rawValue }

    /// The line is not JSON, not an object, not UTF-8, repeats a member, or nests too deep.
    public static let badJSON = ErrorCode("bad_json")
    /// A field is missing, unknown or of the wrong type.
    public static let badRequest = ErrorCode("bad_request")
    /// `op` names no operation.
    public static let unknownOp = ErrorCode("unknown_op")
    /// No value at that object or key path.
    public static let notFound = ErrorCode("not_found")
    /// A key path runs through a value that is not an object.
    public static let notAnObject = ErrorCode("not_an_object")
    /// A collection op names a value that is not an array.
    public static let notAnArray = ErrorCode("not_an_array")
    /// An index is outside the array.
    public static let indexOutOfRange = ErrorCode("index_out_of_range")
    /// The line is longer than `--max-line-bytes`.
    public static let tooLarge = ErrorCode("too_large")
    /// A per-request, per-connection or daemon limit would be exceeded.
    public static let limitExceeded = ErrorCode("limit_exceeded")
    /// A change's `await` was not met within its `awaitTimeout`; the change is applied,
    /// and the error carries `seq`, `observers` and `acknowledged`.
    public static let timeout = ErrorCode("timeout")
    /// `observe` with a `since` whose changes kvod no longer holds, or of another `epoch`;
    /// the error carries `oldestSeq` and `epoch`.
    public static let compacted = ErrorCode("compacted")
    /// An `ifModSeq` or `ifValue` condition does not hold; nothing changed. The error
    /// carries the value's current `modSeq`.
    public static let preconditionFailed = ErrorCode("precondition_failed")
    /// The access policy does not let this client do that to that object.
    public static let forbidden = ErrorCode("forbidden")
    /// Over etcd (`kvod --etcd`): the cluster cannot be reached, or a change kept losing its
    /// race for an object; nothing changed. Reads still answer, marked `stale`.
    public static let unavailable = ErrorCode("unavailable")
    /// With `--data-dir`: the disk is too full for a write that adds data; nothing changed.
    /// Reads, observations and deletes go on; kvod accepts writes again once space is freed.
    public static let storageFull = ErrorCode("storage_full")

    /// The daemon's codes, in docs/PROTOCOL.md's order.
    public static let allCases: [ErrorCode] = [
        .badJSON, .badRequest, .unknownOp, .notFound, .notAnObject, .notAnArray, .indexOutOfRange, .tooLarge,
        .limitExceeded, .timeout, .compacted, .preconditionFailed, .forbidden, .unavailable, .storageFull,
    ]
}
