import KVOProtocol

/// An HTTP request answered at once with an error: its status, and the socket
/// protocol's `code` and `message` for the body (docs/HTTP.md, "Errors").
public struct HTTPRefusal: Error, Equatable, Sendable {
    public let status: Int
    public let code: ErrorCode
    public let message: String
    /// Headers besides the body's (`Allow` for a method not served).
    public let headers: [HTTPHeader]

    public init(_ code: ErrorCode, _ message: String, status: Int? = nil, headers: [HTTPHeader] = []) {
        self.code = code
        self.message = message
        self.status = status ?? HTTPErrorStatus.of(code)
        self.headers = headers
    }
}

/// One response header, its name in lower case.
public struct HTTPHeader: Equatable, Sendable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
