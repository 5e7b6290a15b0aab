import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// The reconnect policy over etcd, where a batch's ops share one seq (the
/// revision): an observer resumes from the revision before the last one it
/// read and drops what it already had (``ResumeCursorTests`` for the rule).
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterReconnectTests {
    @Test func reconnectToAnotherKvodWithBatchesMissesAndRepeatsNothing() async throws {
        try await reconnect(toAKvodStartedAfterTheMissedChanges: false)
    }

    /// A kvod started after the changes the observer missed holds them too (docs/CLUSTER.md, "A kvod just started").
    @Test func reconnectToAKvodStartedAfterTheMissedChangesMissesAndRepeatsNothing() async throws {
        try await reconnect(toAKvodStartedAfterTheMissedChanges: true)
    }

    /// The kvod it moves to is still catching up, behind what the observer
    /// read: its `since` is `unavailable` there, so the connection comes back
    /// later and resumes once that kvod has caught up, instead of ending the
    /// observation.
    @Test func reconnectToAKvodStillCatchingUpWaitsForItInsteadOfEndingTheObservation() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let arguments = ["--etcd", cluster.clientURLs[0]]
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        let observed = try await KVODProcess(arguments: arguments)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: observed.socketPath)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(300)))
        let stream = StreamRecorder(connection.changes(of: "o0", keyPath: "n", options: [.new]))
        try await connection.ping()
        _ = try RevisionMaker.makeRevisions(4_000, through: observed.socketPath)
        try await stream.changes.waitForCount(250)  // o0's share of them, the last at or near `target`
        // A kvod whose member stops while it replays the history listens behind `target`, stale.
        let late = try await KVODProcess(arguments: arguments, waitForSocket: false)
        try await waitUntil("the late kvod read the prefix", timeout: 30, recheckEvery: 0.002) { () async -> Bool in
            late.lastLogLine(containing: "over etcd") != nil
        }
        cluster.pause(member: 0)
        var paused = true
        defer { if paused { cluster.resume(member: 0) } }
        try await waitUntil("the late kvod listens", timeout: 30, recheckEvery: 0.02) { () async -> Bool in
            UnixSockets.canConnect(late.socketPath)
        }
        try await observed.kill()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: late.socketPath)
        // The observer's resume point is past what the late kvod applied: refused as unavailable, at least once.
        let probe = try LineClient(path: late.socketPath)
        try await waitUntil("the late kvod refused the resumed observe", timeout: 20) { () async -> Bool in
            Self.observeRequests(through: probe) > 0
        }
        #expect(stream.errors.count == 0, "the observation ended: \(stream.errors.values)")
        cluster.resume(member: 0)
        paused = false
        try await waitUntil("the connection is back with its observation", timeout: 30) {
            if stream.errors.count > 0 { return true }
            return (try? await connection.observations().count) == 1
        }
        try #require(stream.errors.count == 0, "\(stream.errors.values)")
        try Self.set(through: probe)
        #expect(try await stream.changes.waitForCount(251).last?.new == -1)
        #expect(stream.changes.count == 251, "nothing missed or repeated")
    }

    /// The `observe` requests a kvod answered, from its metrics (blocking socket work).
    private static func observeRequests(through probe: LineClient) -> Int {
        let text = (try? probe.request(#"{"op":"metrics"}"#).reply["text"]?.stringValue) ?? ""
        return (try? PrometheusText(parsing: text).value("kvod_requests_total", ["op": "observe"])).flatMap { $0 }
            .map { Int($0) } ?? 0
    }

    private static func set(through probe: LineClient) throws {
        let reply = try probe.request(#"{"op":"set","object":"o0","keyPath":"n","value":-1}"#, timeout: 30).reply
        guard reply["ok"] == true else { throw TestFailure("\(reply)") }
    }

    private func reconnect(toAKvodStartedAfterTheMissedChanges startsLater: Bool) async throws {
        let cluster = try await EtcdCluster(size: 1)
        let arguments = ["--etcd", cluster.clientURLs[0]]
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The observer reaches a kvod through a link, moved to another kvod when the first dies: one
        // that ran meanwhile, or one started after the changes the observer missed.
        let path = directory + "/kvod.sock"
        let observed = try await KVODProcess(arguments: arguments)
        let other = try await KVODProcess(arguments: arguments)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: observed.socketPath)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(300), maximumDelay: .milliseconds(300)))
        let stream = StreamRecorder(connection.changes(of: "o", keyPath: "k", options: [.new]))
        let writer = try KVOConnection(socketPath: other.socketPath)
        func batch(_ values: [Int]) async throws {
            _ = try await writer.batch(try values.map { try WriteOperation.set("o", "k", to: $0) })
        }
        try await connection.ping()  // registered: the first batch is news to it
        try await batch([1, 2, 3])
        try await stream.changes.waitForCount(3)  // one revision, three changes, all with its seq

        try await observed.kill()
        try await batch([4, 5, 6])
        let later = startsLater ? try await KVODProcess(arguments: arguments) : nil
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: (later ?? other).socketPath)
        try await waitUntil("the connection is back with its observation", timeout: 20) {
            if stream.errors.count > 0 { return true }
            return (try? await connection.observations().count) == 1
        }
        try #require(stream.errors.count == 0, "\(stream.errors.values)")
        try await batch([7, 8, 9])
        #expect(try await stream.changes.waitForCount(9).map(\.new) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        try await connection.ping()  // its reply follows every event already sent
        #expect(stream.changes.count == 9, "no duplicate")
        #expect(stream.errors.count == 0)
    }
}
