import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// KVOTestSupport's async `waitUntil` suspends between polls: waiting tasks
/// leave the cooperative pool (one thread per core) to the tasks they wait
/// for. A waiter that blocked its thread would hold the pool, the reply's
/// task could not resume, and the waiters would time out.
@Suite(.onDedicatedThread) struct WaitingTests {
    @Test func asyncWaitUntilLeavesTheCooperativePoolToTheTaskItWaitsFor() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        let answered = Recorder<Int>()
        // More waiters than the pool has threads, queued before the task they wait for.
        let waiters = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<waiters {
                group.addTask {
                    try await waitUntil("info is answered", timeout: 20) { () async -> Bool in answered.count > 0 }
                }
            }
            group.addTask { answered.append(try await connection.info().connections) }
            try await group.waitForAll()
        }
        #expect(answered.values == [1])
    }
}
