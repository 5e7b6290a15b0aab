import KVOEngine
import KVOProtocol

/// Why a KVOClient call failed: the daemon's error, with the protocol's code
/// and message, or the client's own (no connection, a value that would not
/// encode or decode).
///
/// Codes are a struct, not an enum, so the set can grow without breaking
/// callers. Compare with the named codes: `error.code == .notFound`.
public struct KVOClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The machine-readable part: for the daemon's errors, the `code` string on the wire.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The spelling, e.g. `not_found`.
        public let rawValue: String
        /// A code by its spelling; the named ones below are the codes kvod and KVOClient use.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The spelling, as kvod sends it.
        public var description: String { rawValue }

        // The daemon's codes (docs/PROTOCOL.md, "Errors").

        /// The request was not JSON (kvod's `bad_json`).
        public static let badJSON = Code(ErrorCode.badJSON.rawValue)
        /// A field is missing, unknown or mistyped, or a key path is malformed.
        public static let badRequest = Code(ErrorCode.badRequest.rawValue)
        /// The daemon knows no such operation.
        public static let unknownOp = Code(ErrorCode.unknownOp.rawValue)
        /// No value at that object or key path.
        public static let notFound = Code(ErrorCode.notFound.rawValue)
        /// A key path runs through a value that is not a JSON object.
        public static let notAnObject = Code(ErrorCode.notAnObject.rawValue)
        /// A collection operation names a value that is not an array.
        public static let notAnArray = Code(ErrorCode.notAnArray.rawValue)
        /// An index is outside the array.
        public static let indexOutOfRange = Code(ErrorCode.indexOutOfRange.rawValue)
        /// The request line was longer than the daemon accepts.
        public static let tooLarge = Code(ErrorCode.tooLarge.rawValue)
        /// A per-request or per-connection limit would be exceeded.
        public static let limitExceeded = Code(ErrorCode.limitExceeded.rawValue)
        /// kvod no longer holds the changes a resume asked for (its history was
        /// trimmed, or it restarted without its data): get the current value afresh.
        public static let compacted = Code(ErrorCode.compacted.rawValue)
        /// The access policy does not let this client do that (kvod's `forbidden`).
        public static let forbidden = Code(ErrorCode.forbidden.rawValue)
        /// kvod runs over etcd (`kvod --etcd`) and cannot reach it, or the change kept
        /// losing its race for the object; nothing changed (kvod's `unavailable`).
        public static let unavailable = Code(ErrorCode.unavailable.rawValue)
        /// kvod's data directory is on a full disk and the write would add data;
        /// nothing changed (kvod's `storage_full`). Reads, observations and deletes
        /// go on; retry once space is freed.
        public static let storageFull = Code(ErrorCode.storageFull.rawValue)
        /// An `ifModSeq` or `ifValue` condition did not hold: nothing changed.
        /// ``KVOClientError/modSeq`` is the value's current modSeq.
        public static let preconditionFailed = Code(ErrorCode.preconditionFailed.rawValue)
        /// A write with ``AwaitCondition`` was not written to, or acknowledged
        /// by, every observer within its timeout. The change is applied;
        /// ``KVOClientError/seq``, ``KVOClientError/observers`` and
        /// ``KVOClientError/acknowledged`` say how far it got. (Not
        /// ``timedOut``, the client's own: kvod did not answer at all.)
        public static let timeout = Code(ErrorCode.timeout.rawValue)

        // The client's own codes.

        /// The socket could not be connected (no daemon there, no permission, path too long).
        public static let cannotConnect = Code("cannot_connect")
        /// The connection broke; requests in flight may or may not have been applied.
        public static let connectionLost = Code("connection_lost")
        /// The connection was closed by this program (``KVOConnection/close()``).
        public static let closed = Code("closed")
        /// A value could not be encoded as JSON.
        public static let encodingFailed = Code("encoding_failed")
        /// A value from the daemon could not be decoded as the type asked for.
        public static let decodingFailed = Code("decoding_failed")
        /// The daemon sent something this client does not understand.
        public static let protocolViolation = Code("protocol_violation")
        /// No reply within the connection's ``KVOConnection/Configuration/requestTimeout``;
        /// the message says whether the request was sent (then it may or may
        /// not have been applied) or withdrawn unsent. The connection stays open.
        public static let timedOut = Code("timed_out")

        static let clientCodes: Set<Code> = [
            .cannotConnect, .connectionLost, .closed, .encodingFailed, .decodingFailed, .protocolViolation, .timedOut,
        ]
    }

    /// What kind of failure: the protocol's code, or the client's own.
    public let code: Code
    /// What went wrong, for people (the daemon's message for its errors).
    public let message: String
    /// For ``Code-swift.struct/preconditionFailed`` (and `not_found` from a get): the value's
    /// current modSeq, `0` when there is no value; nil when the daemon sent none.
    public let modSeq: UInt64?
    /// For an error of a ``KVOConnection/batch(_:)``: the position in the batch of the op that failed.
    public let index: Int?
    /// For ``Code-swift.struct/timeout``: the seq of the change, which is applied.
    public let seq: UInt64?
    /// For ``Code-swift.struct/timeout``: the observers the write waited for (``AwaitedWrite/observers``).
    public let observers: Int?
    /// For ``Code-swift.struct/timeout``: how many of them were satisfied in time (``AwaitedWrite/acknowledged``).
    public let acknowledged: Int?

    /// An error with `code` and `message`, for code that wraps KVOClient or stands in for it in tests.
    public init(_ code: Code, _ message: String, modSeq: UInt64? = nil, index: Int? = nil, seq: UInt64? = nil,
                observers: Int? = nil, acknowledged: Int? = nil) {
        self.code = code
        self.message = message
        self.modSeq = modSeq
        self.index = index
        self.seq = seq
        self.observers = observers
        self.acknowledged = acknowledged
    }

    /// Whether the daemon reported this error in a reply (as opposed to the
    /// client failing to reach it or to convert a value).
    public var isDaemonError: Bool { !Code.clientCodes.contains(code) }

    /// Whether the connection is the problem: it could not be made, broke, or
    /// was closed, or kvod did not answer in time.
    public var isConnectionError: Bool { [.cannotConnect, .connectionLost, .closed, .timedOut].contains(code) }

    /// `code: message`, as kvoctl prints it.
    public var description: String { "\(code): \(message)" }
}
