import KVOProtocol
import OrderedCollections

/// An error that kvod reports to a client: a stable code and a message for people.
///
/// One place, ``ReplyEncoder``, turns it into a wire reply
/// (`{"id":…,"ok":false,"error":{"code":…,"message":…[,details…]}}`), as xenstored's
/// `send_error` does. Codes are a struct, not an enum, so the set can grow
/// without breaking callers.
public struct KVOEngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The machine-readable part, the `code` string on the wire.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The wire spelling, e.g. `not_found`.
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The line is not JSON, not an object, or nests too deep.
        public static let badJSON = Code(ErrorCode.badJSON.rawValue)
        /// A field is missing or has the wrong type.
        public static let badRequest = Code(ErrorCode.badRequest.rawValue)
        /// `op` names no operation kvod knows.
        public static let unknownOp = Code(ErrorCode.unknownOp.rawValue)
        /// The object or key path holds no value.
        public static let notFound = Code(ErrorCode.notFound.rawValue)
        /// A key path runs through a value that is not a JSON object.
        public static let notAnObject = Code(ErrorCode.notAnObject.rawValue)
        /// A collection operation names a value that is not an array.
        public static let notAnArray = Code(ErrorCode.notAnArray.rawValue)
        /// An array index is outside the array.
        public static let indexOutOfRange = Code(ErrorCode.indexOutOfRange.rawValue)
        /// A line is longer than the daemon accepts.
        public static let tooLarge = Code(ErrorCode.tooLarge.rawValue)
        /// A per-connection or per-request limit would be exceeded.
        public static let limitExceeded = Code(ErrorCode.limitExceeded.rawValue)
        /// `observe` with a `since` older than the change history; the error
        /// carries `oldestSeq`, the oldest change still held.
        public static let compacted = Code(ErrorCode.compacted.rawValue)
        /// The access policy does not let this client do that to that object.
        public static let forbidden = Code(ErrorCode.forbidden.rawValue)
        /// An `ifModSeq` or `ifValue` condition does not hold; the error
        /// carries the value's current `modSeq`. Nothing changed.
        public static let preconditionFailed = Code(ErrorCode.preconditionFailed.rawValue)
        /// A change's `await` was not met within its `awaitTimeout`; the
        /// change is applied, and the error carries `seq`, `observers` and
        /// `acknowledged`.
        public static let timeout = Code(ErrorCode.timeout.rawValue)
        /// Over etcd (`--etcd`): the cluster cannot be reached, or a change
        /// kept losing its race for an object; nothing changed. Reads still answer, `stale`.
        public static let unavailable = Code(ErrorCode.unavailable.rawValue)
        /// With `--data-dir`: the disk is too full for a write that adds
        /// data; nothing changed. Reads, observations and deletes go on.
        public static let storageFull = Code(ErrorCode.storageFull.rawValue)
    }

    public let code: Code
    public let message: String
    /// Extra members of the wire error object, for codes that carry data
    /// (`compacted`: `oldestSeq`).
    public let details: JSONObject

    public init(_ code: Code, _ message: String, details: JSONObject = [:]) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code): \(message)" }

    static func badRequest(_ message: String) -> KVOEngineError { .init(.badRequest, message) }
}
