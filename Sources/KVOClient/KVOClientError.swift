import KVOValues
import KVOProtocol

/// Why a KVOClient call failed: the daemon's error, with the protocol's code
/// and message, or the client's own (no connection, a value that would not
/// encode or decode).
///
/// Compare with the named codes: `error.code == .notFound`.
public struct KVOClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The machine-readable part: for the daemon's errors, the `code` string on
    /// the wire. KVOProtocol's one error-code type: the daemon's codes
    /// (docs/PROTOCOL.md, "Errors") and the client's own (`cannot_connect`,
    /// `connection_lost`, `closed`, `encoding_failed`, `decoding_failed`,
    /// `protocol_violation`, `timed_out`).
    public typealias Code = ErrorCode

    /// What kind of failure: the protocol's code, or the client's own.
    public let code: Code
    /// What went wrong, for people (the daemon's message for its errors).
    public let message: String
    /// For `preconditionFailed` (and `not_found` from a get): the value's
    /// current modSeq, `0` when there is no value; nil when the daemon sent none.
    public let modSeq: UInt64?
    /// For an error of a ``KVOConnection/batch(_:)``: the position in the batch of the op that failed.
    public let index: Int?
    /// For `timeout`: the seq of the change, which is applied.
    public let seq: UInt64?
    /// For `timeout`: the observers the write waited for (``AwaitedWrite/observers``).
    public let observers: Int?
    /// For `timeout`: how many of them were satisfied in time (``AwaitedWrite/acknowledged``).
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
    public var isDaemonError: Bool { !ErrorCode.clientCodes.contains(code) }

    /// Whether the connection is the problem: it could not be made, broke, or
    /// was closed, or kvod did not answer in time.
    public var isConnectionError: Bool { [Code.cannotConnect, .connectionLost, .closed, .timedOut].contains(code) }

    /// `code: message`, as kvoctl prints it.
    public var description: String { "\(code): \(message)" }
}

/// KVOClient's own codes, beside the daemon's: failures of the client, never sent by kvod.
extension ErrorCode {
    /// The socket could not be connected (no daemon there, no permission, path too long).
    public static let cannotConnect = ErrorCode("cannot_connect")
    /// The connection broke; requests in flight may or may not have been applied.
    public static let connectionLost = ErrorCode("connection_lost")
    /// The connection was closed by this program (``KVOConnection/close()``).
    public static let closed = ErrorCode("closed")
    /// A value could not be encoded as JSON.
    public static let encodingFailed = ErrorCode("encoding_failed")
    /// A value from the daemon could not be decoded as the type asked for.
    public static let decodingFailed = ErrorCode("decoding_failed")
    /// The daemon sent something this client does not understand.
    public static let protocolViolation = ErrorCode("protocol_violation")
    /// No reply within the connection's ``KVOConnection/Configuration/requestTimeout``;
    /// the message says whether the request was sent (then it may or may
    /// not have been applied) or withdrawn unsent. The connection stays open.
    public static let timedOut = ErrorCode("timed_out")

    static let clientCodes: Set<ErrorCode> = [
        .cannotConnect, .connectionLost, .closed, .encodingFailed, .decodingFailed, .protocolViolation, .timedOut,
    ]
}
