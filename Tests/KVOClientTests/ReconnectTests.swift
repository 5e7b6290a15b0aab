import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// The opt-in reconnect policy, against a kvod that is killed and restarted.
@Suite struct ReconnectTests {
    @Test func reconnectingConnectionRegistersItsObservationsAgain() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        var kvod = try KVODProcess(socketPath: path)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100)))
        var changes = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("o", keyPath: "other", options: [.new]) { observer, _, change in
            observer.changes.append(change)
        }
        try await connection.set("o", "k", to: 1)
        #expect(try await changes.next()?.new == 1)

        try kvod.kill()
        kvod = try KVODProcess(socketPath: path)
        try await waitUntil("the connection is back with both observations", timeout: 20) {
            (try? await connection.observations().count) == 2
        }
        let writer = try KVOConnection(socketPath: path)
        try await writer.set("o", "k", to: 2)
        try await writer.set("o", "other", to: 3)
        #expect(try await changes.next()?.new == 2)
        #expect(try await observer.changes.waitForCount(1).first?.new == 3)
        #expect(observer.errors.count == 0)
        _ = kvod
    }

    @Test func reconnectGivesUpAfterItsAttemptsAndEndsTheStream() async throws {
        let kvod = try KVODProcess()
        let connection = try KVOConnection(
            socketPath: kvod.socketPath,
            reconnect: .retry(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(10), maximumAttempts: 3))
        var changes = connection.changes(of: "o", keyPath: "k").makeAsyncIterator()
        #expect(try await connection.observations().count == 1)
        try kvod.kill()
        do {
            _ = try await changes.next()
            Issue.record("the stream went on without a daemon")
        } catch {
            #expect(error.code == .connectionLost)
            #expect(error.message.contains("gave up"))
        }
    }
}
