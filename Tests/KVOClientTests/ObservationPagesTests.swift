import KVOClient
import KVOTestSupport
import Testing

/// `observations` against the real kvod: one page, and every observation by paging.
@Suite(.onDedicatedThread) struct ObservationPagesTests {
    /// Sends a protocol line as it is and returns kvod's reply line.
    private func raw(_ line: String, on connection: KVOConnection) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            connection.sendRaw(line) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
    }

    @Test func observationsPagesThroughEveryObservationOldestFirst() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        // 2,500 key paths in one request: the daemon's observations, made in this order.
        let keyPaths = (0..<2_500).map { "\"k\($0)\"" }.joined(separator: ",")
        let reply = try await raw(#"{"op":"observe","object":"o","keyPaths":[\#(keyPaths)]}"#, on: connection)
        #expect(reply.contains(#""ok":true"#), "\(reply)")
        let expected = (0..<2_500).map { "k\($0)" }

        let first = try await connection.observationsPage()
        #expect(first.observations.count == 1000 && first.more && first.next != nil, "kvod's default page is 1000")
        let second = try await connection.observationsPage(after: first.next, limit: 1500)
        #expect(second.observations.map(\.keyPath) == Array(expected[1000...]) && !second.more && second.next == nil)

        #expect(try await connection.observations().map(\.keyPath) == expected)
        #expect(try await connection.observations(pageSize: 7).map(\.keyPath) == expected)
        do {
            _ = try await connection.observationsPage(limit: KVOConnection.maximumListLimit + 1)
            Issue.record("a page over the limit was served")
        } catch {
            #expect(error.code == .limitExceeded)
        }
    }
}
