import KVOEngine
import KVOValues
import KVOProtocol

/// An HTTP response made from an op's reply line (docs/HTTP.md): the status from
/// the outcome (an error's by ``HTTPErrorStatus``), the body by the route's
/// ``HTTPAnswerShape``, a value's `modSeq` as its ETag.
public struct HTTPAnswer: Equatable, Sendable {
    public var status: Int
    public var headers: [HTTPHeader]
    public var contentType: String
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPHeader] = [], contentType: String = "application/json", body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.contentType = contentType
        self.body = body
    }

    /// An error's answer: `{"code":…,"message":…}` and the refusal's headers.
    public init(_ refusal: HTTPRefusal) {
        let error = JSONObject([Field.code: .string(refusal.code.rawValue), Field.message: .string(refusal.message)])
        self.init(status: refusal.status, headers: refusal.headers, body: JSONValue.object(error).jsonBytes + [0x0A])
    }

    /// The answer to `reply` (one line, without its newline), for a route of `shape`.
    public init(reply: some Collection<UInt8>, shape: HTTPAnswerShape) {
        if shape == .value, let answer = reply.withContiguousStorageIfAvailable({ Self.value(from: UnsafeRawBufferPointer($0)) }) ?? nil {
            self = answer
            return
        }
        guard case .object(var members)? = try? JSONReader.parse(reply) else {
            self.init(HTTPRefusal(.badRequest, "kvod's reply could not be read", status: 500))
            return
        }
        members[Field.id] = nil
        guard members[Field.ok] == .bool(true) else {
            self.init(error: members[Field.error])
            return
        }
        members[Field.ok] = nil
        switch shape {
        case .value:
            let modSeq = members.integer(.modSeq)
            self.init(status: 200, headers: modSeq.map { [HTTPHeader("etag", HTTPEntityTag.of(modSeq: $0))] } ?? [],
                      body: (members[Field.value] ?? .null).jsonBytes + [0x0A])
        case .written:
            // The value's modSeq is the seq of the change that wrote it.
            let seq = members.integer(.seq)
            self.init(status: 200, headers: seq.map { [HTTPHeader("etag", HTTPEntityTag.of(modSeq: $0))] } ?? [],
                      body: JSONValue.object(members).jsonBytes + [0x0A])
        case .reply:
            self.init(status: 200, body: JSONValue.object(members).jsonBytes + [0x0A])
        case .metricsText:
            guard case .string(let text)? = members[Field.text] else {
                self.init(HTTPRefusal(.badRequest, "kvod's metrics reply had no text", status: 500))
                return
            }
            self.init(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8))
        }
    }

    /// A `get` that succeeded: the value's bytes cut from the reply as kvod wrote
    /// them, and its modSeq, without building the value and writing it again.
    /// Nil for anything else (an error, a reply it cannot read), which takes
    /// the general path.
    public static func value(from reply: UnsafeRawBufferPointer) -> HTTPAnswer? {
        var reader = JSONReader(reply)
        var value: Range<Int>?
        var modSeq: Int?
        var seen = (ok: false, modSeq: false)
        var nameOffset = 0
        do {
            try reader.beginObject()
            // Names as bytes (no String each); a repeated one is not kvod's reply: the general path.
            while let name = try reader.nextMemberText(nameOffset: &nameOffset) {
                guard case .plain(let bytes) = name else { return nil }
                if bytes.isName(of: .ok) {
                    guard !seen.ok, try reader.readValue() == .bool(true) else { return nil }
                    seen.ok = true
                } else if bytes.isName(of: .value) {
                    guard value == nil else { return nil }
                    _ = reader.peekKind()
                    let start = reader.offset
                    try reader.skipValue()
                    value = start..<reader.offset
                } else if bytes.isName(of: .modSeq) {
                    guard !seen.modSeq else { return nil }
                    seen.modSeq = true
                    if case .number(let number) = try reader.readValue() { modSeq = number.intValue }
                } else {
                    try reader.skipValue()
                }
            }
            try reader.finish()
        } catch {
            return nil
        }
        guard seen.ok else { return nil }
        var body = value.map { Array(reply[$0]) } ?? Array(JSONValue.null.jsonBytes)
        body.append(0x0A)
        return HTTPAnswer(status: 200, headers: modSeq.map { [HTTPHeader("etag", HTTPEntityTag.of(modSeq: $0))] } ?? [],
                          body: body)
    }

    /// A failed reply's error object, whole (details such as `modSeq` included).
    private init(error: JSONValue?) {
        guard case .object(let details)? = error, case .string(let code)? = details[Field.code] else {
            self.init(HTTPRefusal(.badRequest, "kvod's reply had no error code", status: 500))
            return
        }
        let errorCode = ErrorCode(code)
        var headers: [HTTPHeader] = []
        if errorCode == .preconditionFailed, let modSeq = details.integer(.modSeq) {
            headers.append(HTTPHeader("etag", HTTPEntityTag.of(modSeq: modSeq)))
        }
        if errorCode == .limitExceeded || errorCode == .unavailable {
            headers.append(HTTPHeader("retry-after", "1"))
        }
        self.init(status: HTTPErrorStatus.of(errorCode), headers: headers, body: JSONValue.object(details).jsonBytes + [0x0A])
    }
}
