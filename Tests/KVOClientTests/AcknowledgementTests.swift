import Dispatch
import KVOClient
import KVOTestSupport
import Testing

/// Acknowledgements and `await` with KVOClient against the real kvod: an
/// observation made with `acknowledges` acks by itself once its change is
/// handled, and a writer's `await: .acknowledged` returns only then.
@Suite(.onDedicatedThread) struct AcknowledgementTests {
    /// The connection's highest acked seq as kvod holds it (its only observation's `lastAckedSeq`).
    private func lastAckedSeq(_ connection: KVOConnection) async throws -> UInt64? {
        try await connection.observations().first?.health?.lastAckedSeq
    }

    @Test func anAwaitAcknowledgedWriteReturnsOnlyAfterTheControllersBlockReturned() async throws {
        let kvod = try await KVODProcess()
        let agent = try connect(kvod)
        let writer = try connect(kvod)
        let observer = RecordingObserver()
        let steps = Recorder<String>()
        let release = DispatchSemaphore(value: 0)
        let controller = KVOController(observer: observer, connection: agent)
        controller.observe("config", keyPath: "version", options: [.new],
                           delivery: DeliveryOptions(acknowledges: true)) { observer, _, change in
            observer.changes.append(change)
            release.wait()  // the agent applies the configuration (the test decides how long)
            steps.append("handled")
        }
        try await waitUntil("kvod holds the agent's observation", timeout: 10) {
            try await agent.observations().first?.delivery.acknowledges == true
        }

        let write = Task(executorPreference: TestThreads.shared) {
            let result = try await writer.set("config", "version", to: 42, await: .acknowledged(timeout: .seconds(30)))
            steps.append("writer returned")
            return result
        }
        let change = try #require(try await observer.changes.waitForCount(1).first)
        // The block is running: kvod has no ack from the agent, so the writer still waits.
        #expect(try await lastAckedSeq(agent) == 0)
        #expect(steps.values.isEmpty)
        release.signal()
        let result = try await write.value
        #expect(result.seq == change.seq && result.observers == 1 && result.acknowledged == 1 && result.isComplete)
        #expect(steps.values == ["handled", "writer returned"])
        #expect(try await lastAckedSeq(agent) == change.seq)
        _ = controller
    }

    @Test func aStreamAcknowledgesWhenItsConsumerAsksForTheNextChange() async throws {
        let kvod = try await KVODProcess()
        let agent = try connect(kvod)
        let writer = try connect(kvod)
        let stream = agent.changes(of: "config", keyPath: "version", options: [.new],
                                   delivery: DeliveryOptions(acknowledges: true))
        let seen = Recorder<Change>()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let consumer = Task(executorPreference: TestThreads.shared) {
            var opened = gate.makeAsyncIterator()
            for try await change in stream {
                seen.append(change)
                _ = await opened.next()  // working on the change until the test opens the gate
            }
        }
        try await waitUntil("kvod holds the agent's observation", timeout: 10) {
            try await agent.observations().count == 1
        }
        let write = Task(executorPreference: TestThreads.shared) { try await writer.set("config", "version", to: 42, await: .acknowledged(timeout: .seconds(30))) }
        let change = try #require(try await seen.waitForCount(1).first)
        #expect(try await lastAckedSeq(agent) == 0, "a change being handled is not acknowledged")
        open.yield()  // the loop's next turn asks for the next change: this one is handled
        let result = try await write.value
        #expect(result.seq == change.seq && result.observers == 1 && result.acknowledged == 1)
        #expect(try await lastAckedSeq(agent) == change.seq)
        consumer.cancel()
    }

    @Test func anAwaitThatTimesOutThrowsTimeoutWithTheCountsAndTheChangeStaysApplied() async throws {
        let kvod = try await KVODProcess()
        let agent = try connect(kvod)
        let writer = try connect(kvod)
        // Two agents: one never handles its change (nobody consumes the stream), one does.
        let silent = agent.changes(of: "config", keyPath: "version", delivery: DeliveryOptions(acknowledges: true))
        let other = try connect(kvod)
        let handled = other.changes(of: "config", keyPath: "version", delivery: DeliveryOptions(acknowledges: true))
        try await waitUntil("kvod holds both observations", timeout: 10) {
            try await writer.info().observations == 2
        }
        let consumer = Task(executorPreference: TestThreads.shared) {
            var changes = handled.makeAsyncIterator()
            _ = try await changes.next()
            try await changes.acknowledge()
            // The iterator is the observation's life (its going unobserves): kept until the batch's events come.
            _ = try await changes.next()
        }
        do {
            // Long enough for the other agent's ack on a loaded machine (`swift test --parallel`).
            let result = try await writer.set("config", "version", to: 43, await: .acknowledged(timeout: .seconds(6)))
            Issue.record("the await returned without the silent agent's ack: \(result)")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.observers == 2 && error.acknowledged == 1, "\(error)")
            #expect(error.seq == 1)
        }
        #expect(try await writer.get("config", "version") == 43, "the change is applied")

        // `written` waits for every observer, acknowledging or not, and a batch for each of its events.
        let written = try await writer.batch([.set("config", "version", to: 44), .set("config", "version", to: 45)],
                                             await: .written)
        #expect(written.seqs == [2, 3] && written.seq == 3)
        #expect(written.observers == 2 && written.acknowledged == 2)
        try await consumer.value
        _ = silent
    }
}
