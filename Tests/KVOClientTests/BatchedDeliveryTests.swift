@testable import KVOClient
import Foundation
import KVOTestSupport
import Testing

/// Changes reach their consumers a read at a time (issue 30 item 3): the
/// reader thread hands each sink all the changes of one read at once (one
/// queue hop for a controller, one wake-up for a stream), in order.
@Suite(.onDedicatedThread) struct BatchedDeliveryTests {
    /// A sink that counts its hand-offs.
    final class CountingSink: ChangeSink, @unchecked Sendable {
        // @unchecked: everything is under `lock`.
        private let lock = NSLock()
        private var handOffs = 0
        private var values: [Int] = []

        func deliver(_ changes: [Delivered]) {
            lock.withLock {
                handOffs += 1
                values += changes.compactMap { if case .number(let n)? = $0.change.new { n.intValue } else { nil } }
            }
        }

        func finish(_ error: KVOClientError) {}

        var snapshot: (handOffs: Int, values: [Int]) { lock.withLock { (handOffs, values) } }
    }

    @Test(.timeLimit(.minutes(1))) func aBurstOfChangesReachesItsSinkInFewerHandOffsThanChanges() throws {
        let kvod = try KVODProcess()
        let connection = try connect(kvod)
        let sink = CountingSink()
        let subscription = connection.core.subscribe(ObservationKey(object: "b", keyPath: "v"), options: [.new],
                                                     context: nil, sink: sink)
        try waitUntil("the observation is registered", timeout: 10) {
            connection.core.state.withLock { _ in subscription.phase == .live }
        }
        let sets = 2_000
        let writer = try LineClient(path: kvod.socketPath)
        try writer.pipeline(count: sets, batch: sets) { #"{"op":"set","object":"b","keyPath":"v","value":\#($0)}"# }
        try waitUntil("every change arrived", timeout: 20) { sink.snapshot.values.count == sets }
        let (handOffs, values) = sink.snapshot
        #expect(values == Array(0..<sets), "every change once, in order")
        // One hand-off per change before; kvod writes many events per turn, so a read carries many.
        #expect(handOffs < sets / 4, "\(handOffs) hand-offs for \(sets) changes")
        withExtendedLifetime(connection) {}
    }

    final class Observer: @unchecked Sendable {
        // @unchecked: `values` is touched only on the controller's queue.
        var values: [Int] = []
    }

    /// A batch is handed on before the reply read after it: when a set on the
    /// observing connection returns, its change is already on the controller's queue.
    @Test(.timeLimit(.minutes(1))) func aReplyReachesItsCallerAfterTheChangesBeforeItReachedTheirSinks() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = Observer()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("r", keyPath: "v", options: [.new]) { observer, _, change in
            if case .number(let n)? = change.new, let value = n.intValue { observer.values.append(value) }
        }
        try await waitUntil("kvod holds the observation", timeout: 10) { try await connection.observations().count == 1 }
        for value in 0..<50 {
            try await connection.set("r", "v", to: value)
            let seen = controller.queue.sync { observer.values }
            #expect(seen.last == value, "the change of the set that returned was delivered: \(seen.suffix(3))")
        }
    }
}
