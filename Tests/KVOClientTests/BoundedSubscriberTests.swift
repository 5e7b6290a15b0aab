import Dispatch
import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// What KVOClient holds for a subscriber that falls behind is bounded
/// (issue 30 item 4): past `subscriberBufferLimit` bytes, its waiting changes
/// fold into the latest per key path, which counts the rest in `coalesced`.
@Suite(.onDedicatedThread) struct BoundedSubscriberTests {

    /// Every change is delivered or counted, in order, the last one is the last value, and far fewer were held.
    private func check(_ changes: [Change]) {
        let indexes = changes.compactMap(FlatOutSetter.index)
        #expect(indexes.count == changes.count && indexes == indexes.sorted() && indexes.last == FlatOutSetter.sets - 1)
        #expect(changes.reduce(0) { $0 + 1 + ($1.coalesced ?? 0) } == FlatOutSetter.sets, "every change accounted for")
        #expect(changes.count < FlatOutSetter.sets / 4, "\(changes.count) changes delivered of \(FlatOutSetter.sets)")
    }

    @Test(.timeLimit(.minutes(1))) func aStreamNotReadWhileChangesPourInHoldsTheLatestAndCountsTheRest() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(configuration: .init(socketPath: kvod.socketPath,
                                                                subscriberBufferLimit: 64 << 10))
        var changes = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await FlatOutSetter.run(against: kvod)
        try await connection.ping()  // every event came before its reply
        var received: [Change] = []
        while let change = try await changes.next() {
            received.append(change)
            if FlatOutSetter.index(change) == FlatOutSetter.sets - 1 { break }
        }
        check(received)
    }

    final class Observer: @unchecked Sendable {
        // @unchecked: `changes` is touched only on the controller's queue.
        var changes: [Change] = []
    }

    @Test(.timeLimit(.minutes(1))) func aBusyControllerHoldsTheLatestAndCountsTheRest() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(configuration: .init(socketPath: kvod.socketPath,
                                                                subscriberBufferLimit: 64 << 10))
        let observer = Observer()
        let queue = DispatchQueue(label: "busy")
        let controller = KVOController(observer: observer, connection: connection, queue: queue)
        let gate = DispatchSemaphore(value: 0)
        controller.observe("o", keyPath: "k", options: [.new]) { observer, _, change in
            if observer.changes.isEmpty { gate.wait() }  // busy with the first change while the rest pour in
            observer.changes.append(change)
        }
        try await FlatOutSetter.pour(against: kvod, observedBy: connection, whileBusy: gate)
        try await waitUntil("the last change ran", timeout: 20) { () async -> Bool in
            queue.sync { observer.changes.last.flatMap(FlatOutSetter.index) == FlatOutSetter.sets - 1 }
        }
        check(queue.sync { observer.changes })
    }
}
