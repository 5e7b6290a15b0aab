/// The `code` of an error reply (docs/PROTOCOL.md, "Errors").
public enum ErrorCode: String, CaseIterable, Sendable {
    /// The line is not JSON, not an object, not UTF-8, repeats a member, or nests too deep.
    case badJSON = "bad_json"
    /// A field is missing, unknown or of the wrong type.
    case badRequest = "bad_request"
    /// `op` names no operation.
    case unknownOp = "unknown_op"
    /// No value at that object or key path.
    case notFound = "not_found"
    /// A key path runs through a value that is not an object.
    case notAnObject = "not_an_object"
    /// A collection op names a value that is not an array.
    case notAnArray = "not_an_array"
    /// An index is outside the array.
    case indexOutOfRange = "index_out_of_range"
    /// The line is longer than `--max-line-bytes`.
    case tooLarge = "too_large"
    /// A per-request, per-connection or daemon limit would be exceeded.
    case limitExceeded = "limit_exceeded"
    /// A change's `await` was not met within its `awaitTimeout`; the change is applied.
    case timeout
    /// `observe` with a `since` whose changes kvod no longer holds, or of another `epoch`.
    case compacted
    /// An `ifModSeq` or `ifValue` condition does not hold; nothing changed.
    case preconditionFailed = "precondition_failed"
    /// The access policy does not let this client do that to that object.
    case forbidden
    /// Over etcd (`kvod --etcd`): the cluster cannot be reached, or a change kept losing its
    /// race for an object; nothing changed. Reads still answer, marked `stale`.
    case unavailable
    /// With `--data-dir`: the disk is too full for a write that adds data; nothing changed.
    /// Reads, observations and deletes go on; kvod accepts writes again once space is freed.
    case storageFull = "storage_full"
}
