import Dispatch
import KVOClient
import KVOTestSupport
import Testing

/// `controller.delivered(through:)`: the observer's own wait until its blocks have run.
@Suite(.onDedicatedThread) struct DeliveredThroughTests {
    /// A writer on another connection makes 500 changes in one batch and hands the
    /// last seq over; once `delivered(through:)` returns, the block has recorded it.
    @Test func returnsOnceTheBlockHasRunForTheChangeOfThatSeq() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let writer = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("o", keyPath: "k", options: [.new]) { observer, _, change in
            observer.changes.append(change)
        }
        try await connection.ping()  // the observe is registered
        let result = try await writer.batch((1...500).map { .set("o", "k", to: JSONValue(integerLiteral: $0)) })
        try await controller.delivered(through: result.seq)
        #expect(observer.changes.values.last?.seq == result.seq)
        #expect(observer.changes.count == 500)
    }

    /// The controller's queue is held when the change arrives: the wait lasts until the
    /// block has run, not only until the change is queued for it.
    @Test func waitsForABlockStillQueuedBehindOtherWork() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let writer = try connect(kvod)
        let queue = DispatchQueue(label: "DeliveredThroughTests")
        let waiterReturned = Recorder<Bool>()
        let seenBeforeTheWaiterReturned = Recorder<Bool>()
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection, queue: queue)
        controller.observe("o", keyPath: "k", options: [.new]) { observer, _, change in
            seenBeforeTheWaiterReturned.append(waiterReturned.count == 0)
            observer.changes.append(change)
        }
        try await connection.ping()  // the observe is registered
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // the queue is held until the waiter has had kvod's answer
        let seq = try await writer.set("o", "k", to: 1)
        let waiter = Task(executorPreference: TestThreads.shared) {
            try await controller.delivered(through: seq)
            waiterReturned.append(true)
        }
        try await waitUntil("the waiter asked kvod for its seq", timeout: 10) { () async throws -> Bool in
            try await writer.metrics().contains(#"kvod_requests_total{op="info"} 1"#)
        }
        try await connection.ping()  // its reply follows the waiter's: the waiter has been answered
        #expect(observer.changes.count == 0)
        gate.signal()
        try await waiter.value
        #expect(observer.changes.values.map(\.seq) == [seq])
        #expect(seenBeforeTheWaiterReturned.values == [true])
    }

    @Test func aSeqKvodHasNotReachedTimesOut() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath, requestTimeout: .milliseconds(200))
        let controller = KVOController(observer: RecordingObserver(), connection: connection)
        await #expect(throws: KVOClientError.self) { try await controller.delivered(through: 1_000) }
    }
}
