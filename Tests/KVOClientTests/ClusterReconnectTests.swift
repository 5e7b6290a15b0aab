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
        let cluster = try await EtcdCluster(size: 1)
        let arguments = ["--etcd", cluster.clientURLs[0]]
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The observer reaches a kvod through a link, moved to another kvod when the first dies: a kvod
        // restarted over etcd holds no history from before it started, so only another one can replay.
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
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: other.socketPath)
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
