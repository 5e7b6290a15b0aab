/// Where `--http` listens: `HOST:PORT`, `[IPV6]:PORT` or `:PORT` (loopback),
/// with `localhost` meaning 127.0.0.1. Hosts are numeric: kvod resolves no names.
struct HTTPEndpoint: Equatable {
    let host: String
    let port: UInt16

    /// nil, and `error` set, when `text` is not an endpoint.
    init(parsing text: String) throws(HTTPEndpointError) {
        guard let colon = text.lastIndex(of: ":") else { throw HTTPEndpointError(text, "no port (HOST:PORT)") }
        var host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]) else {
            throw HTTPEndpointError(text, "the port is not a number from 0 to 65535")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
        guard Self.isNumericAddress(host) else {
            throw HTTPEndpointError(text, "the host must be an IPv4 or IPv6 address (kvod resolves no names)")
        }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can connect: 127.0.0.0/8 or ::1.
    var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    private static func isNumericAddress(_ host: String) -> Bool {
        if host.contains(":") { return host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}

struct HTTPEndpointError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String, _ problem: String) { description = "--http \(text): \(problem)" }
}
