import Dispatch
import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// A subscriber that asked for every change (``DeliveryOptions/everyChange``,
/// issue 30 item 4) is never handed a fold: when it falls behind its
/// subscription ends with `limit_exceeded`, after the changes held, while
/// another subscriber of the same key path and the connection's replies go on.
@Suite(.onDedicatedThread) struct EveryChangeTests {

    /// The changes a subscriber of every change got before it ended: the first ones, none left out or folded.
    private func expectUnbroken(_ changes: [Change]) {
        #expect(!changes.isEmpty && changes.count < FlatOutSetter.sets, "\(changes.count) changes before the end")
        #expect(changes.compactMap(FlatOutSetter.index) == Array(0..<changes.count), "in order, none missing")
        #expect(changes.allSatisfy { $0.coalesced == nil })
    }

    private func connect(_ kvod: KVODProcess) throws -> KVOConnection {
        try KVOConnection(configuration: .init(socketPath: kvod.socketPath, subscriberBufferLimit: 64 << 10))
    }

    @Test(.timeLimit(.minutes(1))) func aStreamOfEveryChangeNotReadEndsWhileAnotherFolds() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var every = connection.changes(of: "o", keyPath: "k", options: [.new],
                                       delivery: DeliveryOptions(everyChange: true)).makeAsyncIterator()
        var folding = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await FlatOutSetter.run(against: kvod)
        try await connection.ping()  // replies flow; every event came before this one
        var received: [Change] = []
        let error = await #expect(throws: KVOClientError.self) {
            while let change = try await every.next() { received.append(change) }
        }
        #expect(error?.code == .limitExceeded)
        expectUnbroken(received)
        // The other subscriber of the same key path got the latest value and counts what it missed.
        var folded: [Change] = []
        while let change = try await folding.next() {
            folded.append(change)
            if FlatOutSetter.index(change) == FlatOutSetter.sets - 1 { break }
        }
        #expect(folded.reduce(0) { $0 + 1 + ($1.coalesced ?? 0) } == FlatOutSetter.sets)
        #expect(try await connection.observations().count == 1, "kvod still observes it for the other")
    }

    final class Observer: @unchecked Sendable {
        // @unchecked: touched only on the controller's queue.
        var changes: [Change] = []
        var errors: [KVOClientError] = []
    }

    @Test(.timeLimit(.minutes(1))) func aBusyControllerOfEveryChangeEndsAndReportsTheError() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = Observer()
        let queue = DispatchQueue(label: "busy")
        let controller = KVOController(observer: observer, connection: connection, queue: queue) { observer, error in
            observer.errors.append(error)
        }
        let gate = DispatchSemaphore(value: 0)
        controller.observe("o", keyPath: "k", options: [.new], delivery: DeliveryOptions(everyChange: true)) {
            observer, _, change in
            if observer.changes.isEmpty { gate.wait() }  // busy with the first change while the rest pour in
            observer.changes.append(change)
        }
        try await FlatOutSetter.pour(against: kvod, observedBy: connection, whileBusy: gate)
        try await waitUntil("the error reached the handler", timeout: 20) { () async -> Bool in
            queue.sync { !observer.errors.isEmpty }
        }
        let (changes, errors) = queue.sync { (observer.changes, observer.errors) }
        #expect(errors.map(\.code) == [.limitExceeded])
        expectUnbroken(changes)
        // Ended on kvod too: it was the key path's only subscriber.
        try await waitUntil("kvod no longer observes it", timeout: 10) {
            try await connection.observations().isEmpty
        }
    }

    /// kvod folds a connection's events when the connection falls behind
    /// (docs/PROTOCOL.md, "Slow readers"); KVOClient reads as fast as kvod
    /// writes, so a test cannot make kvod do it at will: the event kvod then
    /// sends is run through the connection's reader path as if read from the
    /// socket, while the real kvod holds the observation and sends nothing.
    @Test(.timeLimit(.minutes(1))) func aChangeKvodCoalescedEndsASubscriberOfEveryChangeBeforeThatChange() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var every = connection.changes(of: "o", keyPath: "k", options: [.new],
                                       delivery: DeliveryOptions(compact: false, everyChange: true)).makeAsyncIterator()
        var other = connection.changes(of: "o", keyPath: "k", options: [.new],
                                       delivery: DeliveryOptions(compact: false)).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await connection.set("o", "k", to: "first")
        let first = try #require(try await every.next())
        #expect(try await other.next() == first)
        try await connection.ping()  // kvod sends nothing more now
        let folded = #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":"later","seq":"#
            + "\(first.seq + 5),\"coalesced\":4}\n"
        #expect(Array(folded.utf8).withUnsafeBytes { connection.readForBenchmark($0) } == nil)
        let error = await #expect(throws: KVOClientError.self) { _ = try await every.next() }
        #expect(error?.code == .limitExceeded && error?.message.contains("coalesced 4 changes of o k") == true)
        let otherChange = try #require(try await other.next())
        #expect(otherChange.coalesced == 4 && otherChange.new == "later", "the other subscriber takes the fold")
        try await connection.ping()
    }

    @Test(.timeLimit(.minutes(1))) func aThrottleWithEveryChangeIsRefused() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var changes = connection.changes(of: "o", keyPath: "k", options: [.new],
                                         delivery: DeliveryOptions(throttle: .milliseconds(100), everyChange: true))
            .makeAsyncIterator()
        let error = await #expect(throws: KVOClientError.self) { _ = try await changes.next() }
        #expect(error?.code == .badRequest)
    }
}
