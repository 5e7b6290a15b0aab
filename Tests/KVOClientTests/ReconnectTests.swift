import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// The opt-in reconnect policy, against a kvod that is killed and restarted:
/// observations resume where they stopped (`observe` with `since`).
@Suite(.onDedicatedThread) struct ReconnectTests {
    @Test func reconnectAfterARestartWithItsDataDeliversWhatChangedMeanwhileExactlyOnce() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        let arguments = ["--data-dir", directory + "/data"]
        var kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        // A late second attempt, so that sets land while the connection is down.
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(300), maximumDelay: .milliseconds(300)))
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new]))
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection,
                                       onError: { [observer] _, error in observer.errors.append(error) })
        controller.observe("o", keyPath: "other", options: [.new]) { observer, _, change in
            observer.changes.append(change)
        }
        try await connection.set("o", "k", to: 1)
        try await stream.changes.waitForCount(1)

        try await kvod.kill()
        kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        let writer = try KVOConnection(socketPath: path)
        try await writer.set("o", "k", to: 2)
        try await writer.set("o", "other", to: 3)
        try await writer.set("o", "k", to: 4)
        try await waitUntil("the connection is back with both observations", timeout: 20) {
            (try? await connection.observations().count) == 2
        }
        try await writer.set("o", "k", to: 5)
        try await writer.set("o", "other", to: 6)
        #expect(try await stream.changes.waitForCount(4).map(\.new) == [1, 2, 4, 5])
        #expect(try await observer.changes.waitForCount(2).map(\.new) == [3, 6])
        // Nothing more comes: a ping's reply follows every event already sent.
        try await connection.ping()
        #expect(stream.changes.count == 4 && observer.changes.count == 2, "no duplicate")
        #expect(observer.errors.count == 0 && stream.errors.count == 0)
        _ = kvod
    }

    @Test func reconnectAfterARestartWithoutDataEndsTheStreamWithCompacted() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        var kvod = try await KVODProcess(socketPath: path)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100)))
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new]))
        try await connection.set("o", "k", to: 1)
        try await stream.changes.waitForCount(1)
        try await kvod.kill()
        kvod = try await KVODProcess(socketPath: path)
        // The new kvod counts a new history (another epoch): what changed is unknowable, and the stream says so.
        #expect(try await stream.errors.waitForCount(1).first?.code == .compacted)
        // The connection itself is back and usable.
        #expect(try await connection.set("o", "k", to: 2) == 1)
        _ = kvod
    }

    @Test func changesSinceASeqReplaysTheMissedChangesThenGoesLive() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let first = try await connection.set("o", "a.b", to: 1)
        try await connection.set("o", "x", to: 0)
        try await connection.set("o", "a.c", to: 2)
        let epoch = try await connection.info().epoch
        let point = ResumePoint(seq: first, epoch: epoch)
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "a", options: [.new, .old], since: point))
        let replayed = try await stream.changes.waitForCount(1)
        #expect(replayed.first?.old == ["b": 1])
        #expect(replayed.first?.new == ["b": 1, "c": 2])
        #expect(replayed.first?.seq == first + 2)
        try await connection.set("o", "a.b", to: 3)
        #expect(try await stream.changes.waitForCount(2).last?.new == ["b": 3, "c": 2])

        let future = StreamRecorder(connection.changes(of: "o", keyPath: "x",
                                                           since: ResumePoint(seq: first + 100, epoch: epoch)))
        #expect(try await future.errors.waitForCount(1).first?.code == .badRequest)
        let twice = StreamRecorder(connection.changes(of: "o", keyPath: "a", since: point))
        #expect(try await twice.errors.waitForCount(1).first?.code == .badRequest)
    }

    @Test func changesSinceOlderThanTheHistoryFailsWithCompacted() async throws {
        let kvod = try await KVODProcess(arguments: ["--history", "2"])
        let connection = try connect(kvod)
        for value in 1...4 { try await connection.set("o", "k", to: value) }
        let point = ResumePoint(seq: 1, epoch: try await connection.info().epoch)
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k", since: point))
        let error = try await stream.errors.waitForCount(1).first
        #expect(error?.code == .compacted)
        #expect(error?.message.contains("oldest: 3") == true, "\(String(describing: error))")
    }

    @Test func reconnectGivesUpAfterItsAttemptsAndEndsTheStream() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(
            socketPath: kvod.socketPath,
            reconnect: .retry(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(10), maximumAttempts: 3))
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k"))
        #expect(try await connection.observations().count == 1)
        try await kvod.kill()
        let error = try await stream.errors.waitForCount(1).first
        #expect(error?.code == .connectionLost)
        #expect(error?.message.contains("gave up") == true)
    }
}

/// Consumes a ``ChangeStream`` in a task, so that a test waits for its
/// changes and its end with deadlines instead of awaiting `next()` forever.
final class StreamRecorder: Sendable {
    let changes = Recorder<Change>()
    let errors = Recorder<KVOClientError>()
    private let task: Task<Void, Never>

    init(_ stream: ChangeStream) {
        let (changes, errors) = (changes, errors)
        task = Task(executorPreference: TestThreads.shared) {
            do throws(KVOClientError) {
                for try await change in stream { changes.append(change) }
            } catch {
                errors.append(error)
            }
        }
    }

    /// Stops consuming: the stream's observations are unobserved.
    func cancel() { task.cancel() }

    deinit { task.cancel() }
}
