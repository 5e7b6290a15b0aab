import KVOEngine
import KVOValues
import KVOProtocol

/// What a request of kvod's HTTP API asks for, decided from its method, path,
/// query, conditional headers and body alone (docs/HTTP.md):
/// - an op for the engine, as the request line a socket client would send, so
///   HTTP goes through the same decoder, op table, access policy and limits;
/// - or one of the daemon's own endpoints (`/healthz`, `/readyz`).
/// A request that asks for nothing kvod serves is refused here, before any op.
public enum HTTPRoute: Equatable, Sendable {
    case health
    case readiness
    /// `/metrics`: the `metrics` op, its text as the body (a token unless `--http-metrics-open`).
    case metrics(line: [UInt8])
    /// `line` (with its newline) for the engine; `answer`: how its reply becomes the response.
    case request(line: [UInt8], answer: HTTPAnswerShape)
    /// `/v1/watch`: an `observe` line whose reply starts a stream of Server-Sent
    /// Events; `resumed`: the `Last-Event-ID` it goes on after, if any;
    /// `queryToken`: its `access_token` parameter (an `EventSource` cannot send
    /// `Authorization`).
    case watch(line: [UInt8], resumed: HTTPEventID?, queryToken: String?)
    /// A file of the console, the page at `/` (no token: it holds no data).
    case console(ConsoleFile)

    /// What HTTP tells of a request, as H2O parsed it.
    public struct Head: Sendable {
        public var method: String
        /// The path and query, as sent (percent-encoded).
        public var target: String
        public var ifMatch: String?
        public var ifNoneMatch: String?
        public var lastEventID: String?

        public init(method: String, target: String, ifMatch: String? = nil, ifNoneMatch: String? = nil,
                    lastEventID: String? = nil) {
            self.method = method
            self.target = target
            self.ifMatch = ifMatch
            self.ifNoneMatch = ifNoneMatch
            self.lastEventID = lastEventID
        }
    }

    /// The request's one id: an HTTP request carries one op.
    static let requestID = 1

    /// Routes `head` with its `body`.
    public static func route(_ head: Head, body: UnsafeRawBufferPointer) throws(HTTPRefusal) -> HTTPRoute {
        let target = try HTTPTarget(head.target)
        let segments = target.segments
        if head.method == "GET" || head.method == "HEAD", let file = ConsoleFile(path: target.path) {
            return .console(file)
        }
        switch segments.first {
        case "healthz" where segments.count == 1:
            try allow(head.method, ["GET", "HEAD"])
            return .health
        case "readyz" where segments.count == 1:
            try allow(head.method, ["GET", "HEAD"])
            return .readiness
        case "v1" where segments.count == 2 && segments[1] == "info":
            try allow(head.method, ["GET"])
            return .request(line: RequestEncoder(op: .info, id: requestID).line, answer: .reply)
        case "metrics" where segments.count == 1:
            try allow(head.method, ["GET"])
            return .metrics(line: RequestEncoder(op: .metrics, id: requestID).line)
        case "v1" where segments.count == 2 && segments[1] == "objects":
            try allow(head.method, ["GET"])
            return try listRoute(target)
        case "v1" where segments.count == 2 && segments[1] == "batch":
            try allow(head.method, ["POST"])
            return try batchRoute(body)
        case "v1" where segments.count == 2 && segments[1] == "watch":
            try allow(head.method, ["GET"])
            return try watchRoute(head, target: target)
        case "v1" where segments.count >= 3 && segments[1] == "objects":
            return try objectRoute(head, target: target, body: body)
        default:
            throw HTTPRefusal(.notFound, "kvod has no HTTP resource at \(target.path)")
        }
    }

    /// `/v1/objects/{name}` and `/v1/objects/{name}/{key}/{path}`: the key path's
    /// keys are the path's segments after the name, joined by dots.
    private static func objectRoute(_ head: Head, target: HTTPTarget,
                                    body: UnsafeRawBufferPointer) throws(HTTPRefusal) -> HTTPRoute {
        let object = target.segments[2]
        let keys = target.segments.dropFirst(3)
        guard !object.isEmpty, keys.allSatisfy({ !$0.isEmpty }) else {
            throw HTTPRefusal(.badRequest, "an object's name and each key of a key path must not be empty: \(target.path)")
        }
        // A segment is one key: a dot decoded from %2E would split it in two.
        if let dotted = keys.first(where: { $0.utf8.contains(UInt8(ascii: ".")) }) {
            throw HTTPRefusal(.badRequest, "a key cannot hold a dot, and each segment after the name is one key: \(dotted)")
        }
        try refuseParameters(of: target, but: head.method == "PUT" ? ["ttl"] : [], on: "\(head.method) /v1/objects/{name}")
        // One key, the usual case, needs no joining (docs/PERFORMANCE.md, "A GET's own instructions").
        let keyPath = keys.count == 1 ? keys.first : keys.isEmpty ? nil : keys.joined(separator: ".")
        switch head.method {
        case "GET", "HEAD":
            return .request(line: RequestEncoder(op: .get, id: requestID, object: object, keyPath: keyPath).line,
                            answer: .value)
        case "PUT":
            var request = RequestEncoder(op: .set, id: requestID, object: object, keyPath: keyPath)
            request.json(.value, try HTTPBody.oneJSONValue(body))
            try condition(head, into: &request)
            if let ttl = target.parameter("ttl") {
                // The engine checks its range, as for a socket's set.
                guard case .number? = try? JSONReader.parse(ttl) else {
                    throw HTTPRefusal(.badRequest, "ttl must be a number of seconds: \(ttl)")
                }
                request.json(.ttl, Array(ttl.utf8))
            }
            return .request(line: request.line, answer: .written)
        case "DELETE":
            var request = RequestEncoder(op: .delete, id: requestID, object: object, keyPath: keyPath)
            try condition(head, into: &request)
            return .request(line: request.line, answer: .reply)
        default:
            throw HTTPRefusal(.badRequest, "\(head.method) is not served on an object; use GET, HEAD, PUT or DELETE",
                              status: 405, headers: [HTTPHeader("allow", "GET, HEAD, PUT, DELETE")])
        }
    }

    /// `/v1/objects?prefix=&after=&limit=`: `list`, a page of names.
    private static func listRoute(_ target: HTTPTarget) throws(HTTPRefusal) -> HTTPRoute {
        try refuseParameters(of: target, but: ["prefix", "after", "limit"], on: "/v1/objects")
        var request = RequestEncoder(op: .list, id: requestID)
        if let prefix = target.parameter("prefix") { request.string(.prefix, prefix) }
        if let after = target.parameter("after") { request.string(.after, after) }
        if let limit = target.parameter("limit") {
            guard let count = Int(limit) else { throw HTTPRefusal(.badRequest, "limit must be an integer: \(limit)") }
            request.integer(.limit, count)
        }
        return .request(line: request.line, answer: .reply)
    }

    /// Refuses a query parameter that `resource` does not take, or one given
    /// twice (but `repeatable`), as the socket refuses an unknown member: a
    /// misspelt `ttl` must not make a value that lives for ever.
    private static func refuseParameters(of target: HTTPTarget, but taken: [String], repeatable: String? = nil,
                                         on resource: String) throws(HTTPRefusal) {
        for (position, parameter) in target.parameters.enumerated() {
            guard taken.contains(parameter.name) else {
                let takes = taken.isEmpty ? "no query parameter" : taken.joined(separator: ", ")
                throw HTTPRefusal(.badRequest, "\(resource) takes \(takes), not \(parameter.name)")
            }
            if parameter.name != repeatable, target.parameters[..<position].contains(where: { $0.name == parameter.name }) {
                throw HTTPRefusal(.badRequest, "\(parameter.name) is given twice")
            }
        }
    }

    /// `POST /v1/batch` with `{"ops":[…]}`: `batch`, the ops as the socket's.
    private static func batchRoute(_ body: UnsafeRawBufferPointer) throws(HTTPRefusal) -> HTTPRoute {
        guard case .object(let members) = try HTTPBody.value(body), members.count == 1, let ops = members[Field.ops] else {
            throw HTTPRefusal(.badRequest, "a batch's body is {\"ops\":[…]}, the change requests of the socket's batch")
        }
        var request = RequestEncoder(op: .batch, id: requestID)
        request.json(.ops, ops.jsonBytes)
        return .request(line: request.line, answer: .reply)
    }

    /// `/v1/watch?object=…` (or `prefix=…`), `keyPath=…` (repeated for several),
    /// `options=new,old,initial,prior` (default `new`: a browser wants the values),
    /// `compact=true`; `Last-Event-ID` resumes (`since`, `epoch`), or `lastEventId=`
    /// when the header is not there (a new `EventSource` cannot send it); the
    /// token may come as `access_token=` (RFC 6750's query form).
    private static func watchRoute(_ head: Head, target: HTTPTarget) throws(HTTPRefusal) -> HTTPRoute {
        try refuseParameters(of: target, but: ["object", "prefix", "keyPath", "options", "compact", "lastEventId", "access_token"],
                             repeatable: "keyPath", on: "/v1/watch")
        var request = RequestEncoder(op: .observe, id: requestID)
        switch (target.parameter("object"), target.parameter("prefix")) {
        case (let object?, nil): request.string(.object, object)
        case (nil, let prefix?): request.string(.prefix, prefix)
        default: throw HTTPRefusal(.badRequest, "/v1/watch takes one of object= and prefix=")
        }
        let keyPaths = target.parameters("keyPath")
        if keyPaths.count == 1 { request.string(.keyPath, keyPaths[0]) }
        if keyPaths.count > 1 { request.strings(.keyPaths, keyPaths) }
        let options = target.parameter("options").map { $0.split(separator: ",").map(String.init) } ?? ["new"]
        request.strings(.options, options)
        switch target.parameter("compact") {
        case nil, "false": break
        case "true": request.bool(.compact, true)
        case let other?: throw HTTPRefusal(.badRequest, "compact is true or false, not \(other)")
        }
        var resumed: HTTPEventID?
        // The browser's header is newer than the parameter of the URL it reconnects to.
        if let lastEventID = head.lastEventID ?? target.parameter("lastEventId") {
            guard let id = HTTPEventID(lastEventID) else {
                throw HTTPRefusal(.badRequest, "Last-Event-ID must be an id this stream sent (EPOCH:SEQ:N): \(lastEventID)")
            }
            // Seq 0 is an initial event's before any change: nothing precedes it.
            request.integer(.since, max(id.seq - 1, 0))
            request.string(.epoch, id.epoch)
            resumed = id
        }
        return .watch(line: request.line, resumed: resumed, queryToken: target.parameter("access_token"))
    }

    /// `If-Match: "N"` is `ifModSeq: N`; `If-None-Match: *` (create only) is `ifModSeq: 0`.
    private static func condition(_ head: Head, into request: inout RequestEncoder) throws(HTTPRefusal) {
        switch (head.ifMatch, head.ifNoneMatch) {
        case (nil, nil):
            return
        case (let tag?, nil):
            guard let modSeq = HTTPEntityTag.modSeq(tag) else {
                throw HTTPRefusal(.badRequest, "If-Match takes one entity tag, a modSeq as kvod's ETag gives it (\"12\"): \(tag)")
            }
            request.integer(.ifModSeq, modSeq)
        case (nil, "*"):
            request.integer(.ifModSeq, 0)
        case (nil, let tag?):
            throw HTTPRefusal(.badRequest, "If-None-Match takes only * (create only): \(tag)")
        case (_?, _?):
            throw HTTPRefusal(.badRequest, "If-Match and If-None-Match exclude each other")
        }
    }

    private static func allow(_ method: String, _ methods: [String]) throws(HTTPRefusal) {
        guard !methods.contains(method) else { return }
        let allowed = methods.joined(separator: ", ")
        throw HTTPRefusal(.badRequest, "\(method) is not served here; use \(allowed)", status: 405,
                          headers: [HTTPHeader("allow", allowed)])
    }
}

/// How an op's reply becomes the HTTP response.
public enum HTTPAnswerShape: Equatable, Sendable {
    /// `get`: the value itself as the body, its `modSeq` as the ETag.
    case value
    /// A `set`: `{"seq":N}`, and the new modSeq (that seq) as the ETag.
    case written
    /// The reply's members but `id` and `ok` (`info`, `list`, `batch`, a `delete`'s `{"seq":N}`).
    case reply
    /// `metrics`: its `text`, in Prometheus's text format.
    case metricsText
}
