import KVOClient
import KVOTestSupport
import Testing

/// Leaving a `for try await` loop unobserves, also while the stream is still held.
@Suite(.onDedicatedThread) struct StreamIteratorLeaseTests {
    @Test func breakingOutOfALoopOverAStreamHeldInALetUnobserves() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let stream = connection.changes(of: "o", keyPath: "k", options: [.new])
        try await connection.set("o", "k", to: 1)
        for try await change in stream {
            #expect(change.new == 1)
            break
        }
        try await waitUntil("the daemon holds no observation after the loop", timeout: 10) { () async throws -> Bool in
            try await connection.observations().isEmpty
        }
        // The stream is held until here: leaving the loop, not dropping the stream, unobserved.
        withExtendedLifetime(stream) {}
    }

    @Test func aSecondLoopOverTheSameStreamEndsAtOnce() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let stream = connection.changes(of: "o", keyPath: "k", options: [.new])
        try await connection.set("o", "k", to: 1)
        for try await _ in stream { break }
        try await connection.set("o", "k", to: 2)
        let again = try await withDeadline("a second loop over the stream", seconds: 10) {
            var again: [Change] = []
            for try await change in stream { again.append(change) }
            return again
        }
        #expect(again.isEmpty)
    }
}
