import KVOProtocol
import KVOValues
import OrderedCollections

/// An error that kvod reports to a client: a stable code and a message for people.
///
/// One place, ``ReplyEncoder``, turns it into a wire reply
/// (`{"id":…,"ok":false,"error":{"code":…,"message":…[,details…]}}`), as xenstored's
/// `send_error` does.
public struct KVOEngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The machine-readable part, the `code` string on the wire: KVOProtocol's
    /// one error-code type (`compacted` carries `oldestSeq`, `precondition_failed`
    /// the value's `modSeq`, `timeout` `seq`, `observers` and `acknowledged`).
    public typealias Code = ErrorCode

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

    /// `details` of an error of a batch's op: its position in the batch, `index`.
    static func batchIndex(_ index: Int) -> JSONObject {
        JSONObject([KVOProtocol.Field.index: .number(JSONNumber(index))])
    }
}
