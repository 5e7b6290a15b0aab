import Foundation
import KVOValues
import KVOTestSupport
import Testing

/// The connection an HTTP request was served by is kept for the subject's next
/// request (`HTTPIdleConnections`): what one request leaves must not reach the
/// next, and a kept connection is no client (`info`'s `connections`,
/// `--max-connections-per-uid`). Over keep-alive HTTP/1.1 connections, spoken
/// by hand so that requests follow each other on one TCP connection.
@Suite struct HTTPKeptConnectionTests {
    /// One keep-alive HTTP/1.1 connection: a request, then its whole response.
    final class KeepAlive {
        private let connection: LoopbackTCPConnection
        private let token: String
        private var buffer: [UInt8] = []

        init(base: String, token: String) throws {
            connection = try LoopbackTCPConnection(port: try HTTPTests.port(of: base))
            self.token = token
        }

        /// Sends a request and reads its response: status and body.
        func call(_ method: String, _ target: String, body: String = "",
                  headers: [String] = []) throws -> (status: Int, body: String) {
            let fields = ["Host: kvod", "Authorization: Bearer \(token)", "Content-Length: \(body.utf8.count)"] + headers
            connection.send("\(method) \(target) HTTP/1.1\r\n" + fields.joined(separator: "\r\n") + "\r\n\r\n" + body)
            let head = String(decoding: try read(until: Array("\r\n\r\n".utf8)), as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let status = Int(lines[0].split(separator: " ")[1]) ?? 0
            let length = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
            guard let length else { throw TestFailure("no Content-Length in \(head)") }
            return (status, String(decoding: try read(count: length), as: UTF8.self))
        }

        private func read(until separator: [UInt8]) throws -> [UInt8] {
            while true {
                if let range = buffer.firstRange(of: separator) {
                    defer { buffer.removeSubrange(..<range.upperBound) }
                    return Array(buffer[..<range.lowerBound])
                }
                try receive()
            }
        }

        private func read(count: Int) throws -> [UInt8] {
            while buffer.count < count { try receive() }
            defer { buffer.removeSubrange(..<count) }
            return Array(buffer[..<count])
        }

        private func receive() throws {
            guard let chunk = connection.receive() else {
                throw TestFailure("the connection ended or said nothing for 10 s; had \(String(decoding: buffer, as: UTF8.self))")
            }
            buffer += chunk
        }
    }

    @Test func aKeptConnectionCarriesNothingOfOneRequestIntoTheNext() throws {
        let (kvod, base) = try HTTPTests.start()
        let web = try KeepAlive(base: base, token: HTTPTests.token)
        #expect(try web.call("PUT", "/v1/objects/cfg/port", body: "8080").status == 200)
        // Errors, then a success, on the one connection.
        #expect(try web.call("PUT", "/v1/objects/cfg/port", body: "{not json").status == 400)
        #expect(try web.call("GET", "/v1/objects/cfg/missing").status == 404)
        #expect(try web.call("PUT", "/v1/objects/cfg/port", body: "9090", headers: [#"If-Match: "99""#]).status == 412)
        let answered = try web.call("GET", "/v1/objects/cfg/port")
        #expect(answered.status == 200 && answered.body == "8080\n")
        // An ephemeral value belongs to its request's connection: it goes when the request does.
        let ephemeral = #"{"ops":[{"op":"set","object":"cfg","keyPath":"lock","value":true,"ephemeral":true}]}"#
        #expect(try web.call("POST", "/v1/batch", body: ephemeral).status == 200)
        try waitUntil("the ephemeral value went with its request", timeout: 5) {
            try web.call("GET", "/v1/objects/cfg/lock").status == 404
        }
        // A kept connection is no client: the socket's own is the only one.
        let socket = try LineClient(path: kvod.socketPath)
        try waitUntil("info counts the socket's connection alone", timeout: 5) {
            try socket.request(#"{"op":"info"}"#).reply["connections"] == 1
        }
        #expect(try web.call("GET", "/v1/objects/cfg/port").body == "8080\n")
    }

    @Test func aUIDLimitOfOneServesSeveralKeptConnectionsInTurn() throws {
        let folder = try TemporaryDirectory.make()
        try "gid:100 \(try HTTPTests.sha256Hex("staff"))\n".write(toFile: folder + "/tokens", atomically: true, encoding: .utf8)
        chmod(folder + "/tokens", 0o600)
        let kvod = try KVODProcess(arguments: ["--http", "127.0.0.1:0", "--http-tokens", folder + "/tokens",
                                               "--max-connections-per-uid", "1"])
        let logged = try kvod.waitForLog(containing: "serving HTTP on ")
        let base = String(logged[logged.range(of: "http://")!.lowerBound...])
        let first = try KeepAlive(base: base, token: "staff"), second = try KeepAlive(base: base, token: "staff")
        // A request counts until H2O lets it go, which may come after the other
        // connection's next request is read (429): each is asked until served.
        for round in 0..<3 {
            for (name, connection) in [("first", first), ("second", second)] {
                try waitUntil("round \(round): the \(name) connection is served", timeout: 5) {
                    try connection.call("GET", "/v1/info").status == 200
                }
            }
        }
    }
}
