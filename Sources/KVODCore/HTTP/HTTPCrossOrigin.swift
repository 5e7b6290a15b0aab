/// `--http-cors-origin`: the one web origin whose pages may call kvod's HTTP
/// API from a browser (CORS). Without it kvod sends no CORS header, and a
/// browser keeps other origins' pages from reading kvod's answers.
public struct HTTPCrossOrigin: Sendable {
    /// `https://console.example.com`: scheme, host and port, as a browser sends `Origin`.
    public let origin: String

    public init(origin: String) {
        self.origin = origin
    }

    /// The headers an answer to a request from `origin` (its `Origin` header) carries.
    public func headers(requestOrigin: String?) -> [HTTPHeader] {
        guard requestOrigin == origin else { return [] }
        return [HTTPHeader("access-control-allow-origin", origin), HTTPHeader("vary", "Origin"),
                HTTPHeader("access-control-expose-headers", "ETag, Retry-After")]
    }

    /// The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`)
    /// from `requestOrigin`, or nil when it is not this origin's.
    public func preflight(requestOrigin: String?) -> HTTPAnswer? {
        guard requestOrigin == origin else { return nil }
        return HTTPAnswer(status: 204, headers: headers(requestOrigin: requestOrigin) + [
            HTTPHeader("access-control-allow-methods", "GET, HEAD, PUT, DELETE, POST"),
            HTTPHeader("access-control-allow-headers", "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID"),
            HTTPHeader("access-control-max-age", "600"),
        ], body: [])
    }
}
