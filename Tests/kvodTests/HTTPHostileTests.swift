import Foundation
import KVOEngine
import KVOValues
import KVOTestSupport
import Testing

/// Issue 31 item 8: what a hostile or broken HTTP client gets (a clear status
/// or a close) and that the socket's clients do not notice it.
@Suite struct HTTPHostileTests {
    /// What kvod sends on `connection` until it closes it; throws after `timeout` seconds without the close.
    static func readUntilClosed(_ connection: LoopbackTCPConnection, timeout: Double) throws -> String {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TestFailure("kvod kept the connection open; had \(String(decoding: received, as: UTF8.self))") }
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            guard let chunk = connection.receive() else { return String(decoding: received, as: UTF8.self) }
            received += chunk
        }
    }

    @Test func malformedAndOversizedRequestsGetAStatusOrACloseAndOthersGoOn() throws {
        let (kvod, base) = try HTTPTests.start(arguments: ["--max-line-bytes", "1024"])
        let port = try HTTPTests.port(of: base)
        let garbage = try LoopbackTCPConnection(port: port)
        garbage.send("NOT HTTP AT ALL\r\n\r\n")
        #expect(try Self.readUntilClosed(garbage, timeout: 10).hasPrefix("HTTP/1.1 400"))
        // 64 KB of headers is within H2O's bound: answered.
        let big = try LoopbackTCPConnection(port: port)
        big.send("GET /healthz HTTP/1.1\r\nConnection: close\r\nX-Big: " + String(repeating: "a", count: 65_536) + "\r\n\r\n")
        #expect(try Self.readUntilClosed(big, timeout: 10).hasPrefix("HTTP/1.1 200"))
        // Past it (about 417 KB): a 4xx, or a close.
        let huge = try LoopbackTCPConnection(port: port)
        huge.send("GET /healthz HTTP/1.1\r\nX-Huge: " + String(repeating: "a", count: 600_000) + "\r\n\r\n")
        let hugeAnswer = try Self.readUntilClosed(huge, timeout: 10)
        #expect(hugeAnswer.isEmpty || hugeAnswer.hasPrefix("HTTP/1.1 4"), "\(hugeAnswer.prefix(80))")
        let large = try HTTPTests.call("PUT", base + "/v1/objects/a/b", body: "\"" + String(repeating: "x", count: 2_000) + "\"")
        #expect(large.status == 413)
        // The socket's clients and HTTP's well-formed ones are served as before.
        #expect(try LineClient(path: kvod.socketPath).request(#"{"op":"info"}"#).reply["seq"] == 0)
        #expect(try HTTPTests.call("GET", base + "/healthz", token: nil).status == 200)
    }

    @Test func aSenderTooSlowIsClosedAtTheRequestTimeout() throws {
        let (kvod, base) = try HTTPTests.start(arguments: ["--http-request-timeout", "1"])
        defer { withExtendedLifetime(kvod) {} }
        let slow = try LoopbackTCPConnection(port: try HTTPTests.port(of: base))
        slow.send("GET /healthz HTTP/1.1\r\nHost: kv")
        let started = Date()
        _ = try Self.readUntilClosed(slow, timeout: 10)
        #expect(Date().timeIntervalSince(started) >= 0.5)
        // An idle keep-alive connection goes the same way.
        let idle = try LoopbackTCPConnection(port: try HTTPTests.port(of: base))
        idle.send("GET /healthz HTTP/1.1\r\nHost: kvod\r\n\r\n")
        #expect(try Self.readUntilClosed(idle, timeout: 10).hasPrefix("HTTP/1.1 200"))
    }

    @Test func aWatchThatNeverReadsHasItsEventsCoalescedAndTheWriterGoesOn() throws {
        let (kvod, base) = try HTTPTests.start(arguments: ["--output-hard-limit", "256k", "--output-soft-limit", "128k"])
        let port = try HTTPTests.port(of: base)
        // A receive buffer as small as Linux allows, never read.
        let stuck = try LoopbackTCPConnection(port: port)
        var small: Int32 = 4096
        setsockopt(stuck.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        stuck.send("GET /v1/watch?object=big&keyPath=v HTTP/1.0\r\nAuthorization: Bearer \(HTTPTests.token)\r\n\r\n")
        let writer = try LineClient(path: kvod.socketPath)
        try waitUntil("the watch observes", timeout: 10) {
            try writer.request(#"{"op":"info"}"#).reply["observations"] == 1
        }
        let value = String(repeating: "v", count: 16_384)
        try writer.pipeline(count: 400) { #"{"op":"set","object":"big","keyPath":"v","value":"\#(value)\#($0)"}"# }
        let info = try writer.request(#"{"op":"info"}"#).reply
        #expect(info["seq"] == 400)
        try waitUntil("kvod holds the stuck watch's events", timeout: 10) {
            try writer.request(#"{"op":"info"}"#).reply["coalescingConnections"] == 1
        }
        // What waits for it stays within the output limits: 400 events of 16 KB were 6.4 MB.
        let memory = try writer.request(#"{"op":"info"}"#).reply["clientMemory"]?["total"]?.intValue ?? .max
        #expect(memory < 1 << 20, "\(memory) bytes wait for clients")
        // And kvod stops cleanly with it still stuck.
        #expect(try kvod.terminate() == 0)
        #expect(!kvod.stderrText().contains("warning"))
    }
}
