import Foundation
import Glibc
import KVOClient
import KVOTestSupport
import Testing

/// `Configuration.requestTimeout` against a real kvod that does not answer:
/// stopped with SIGSTOP, or gone while the connection reconnects.
@Suite(.onDedicatedThread) struct RequestTimeoutTests {
    /// The error `request` throws, nil if it succeeds; a failure if it has
    /// not ended within 20 s (without a working timeout it never would).
    func failure(of request: @escaping @Sendable () async throws -> Void) async throws -> KVOClientError? {
        try await withDeadline("the request ends", seconds: 20) { () async throws -> KVOClientError? in
            do {
                try await request()
                return nil
            } catch let error as KVOClientError {
                return error
            }
        }
    }

    @Test func requestKvodDoesNotAnswerInTimeThrowsTimedOutAndTheConnectionStaysUsable() async throws {
        #expect(KVOConnection.Configuration(socketPath: "/x").requestTimeout == .seconds(30), "the documented default")
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath, requestTimeout: .milliseconds(300))
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new]))
        try await connection.set("o", "k", to: 1)
        try await stream.changes.waitForCount(1)

        kvod.signal(SIGSTOP)
        defer { kvod.signal(SIGCONT) }
        let start = ContinuousClock.now
        let failure = try await failure { try await connection.set("o", "k", to: 2) }
        let waited = ContinuousClock.now - start
        #expect(failure?.code == .timedOut)
        #expect(failure?.message.contains("may or may not have been applied") == true, "\(String(describing: failure))")
        #expect(waited >= .milliseconds(300) && waited < .seconds(10), "\(waited)")
        // A raw line's callback hears the same.
        let raw = Recorder<KVOClientError?>()
        connection.sendRaw(#"{"op":"ping"}"#) { result in
            if case .failure(let error) = result { raw.append(error) } else { raw.append(nil) }
        }
        #expect(try await raw.waitForCount(1).first??.code == .timedOut)

        kvod.signal(SIGCONT)
        // kvod now answers the set and the ping; those late replies are matched to
        // their requests and dropped, so the get below receives its own reply.
        #expect(try await connection.get(Int.self, "o", "k") == 2, "the timed-out set was applied late")
        #expect(try await stream.changes.waitForCount(2).map(\.new) == [1, 2], "the stream carried on")
        #expect(try await connection.info().connections == 1)
        #expect(raw.count == 1, "a callback is told once")
    }

    @Test func requestMadeWhileReconnectingIsWithdrawnUnsentAtItsDeadline() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/kvod.sock"
        let arguments = ["--data-dir", directory.path + "/data"]
        var kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50)),
            requestTimeout: .milliseconds(300))
        try await connection.set("o", "k", to: 1)
        try await kvod.kill()
        // Until the connection has seen the end of its socket, a request still
        // goes to the dead socket and fails at once with connection_lost.
        var failure: KVOClientError?
        repeat {
            failure = try await self.failure { try await connection.set("o", "k", to: 2) }
        } while failure?.code == .connectionLost
        #expect(failure?.code == .timedOut)
        #expect(failure?.message.contains("was not sent") == true, "\(String(describing: failure))")

        kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        try await waitUntil("the connection is back", timeout: 20) { () async -> Bool in
            (try? await connection.ping()) != nil
        }
        #expect(try await connection.get(Int.self, "o", "k") == 1, "the withdrawn set never reached kvod")
        withExtendedLifetime((directory, kvod)) {}
    }
}
