import Dispatch
import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// What KVOClient holds for a subscriber that falls behind is bounded
/// (issue 30 item 4): past `subscriberBufferLimit` bytes, its waiting changes
/// fold into the latest per key path, which counts the rest in `coalesced`.
@Suite(.onDedicatedThread) struct BoundedSubscriberTests {
    static let sets = 3_000
    static let padding = String(repeating: "x", count: 1_000)

    /// Another connection sets `o.k` to "0-xxx…", "1-xxx…", … flat out (about 3 MB of events).
    private func setFlatOut(_ kvod: KVODProcess) async throws {
        let path = kvod.socketPath
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    let writer = try LineClient(path: path)
                    try writer.pipeline(count: Self.sets, batch: 500) {
                        #"{"op":"set","object":"o","keyPath":"k","value":"\#($0)-\#(Self.padding)"}"#
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private static func index(_ change: Change) -> Int? {
        guard case .string(let text)? = change.new else { return nil }
        return Int(text.prefix { $0 != "-" })
    }

    /// Every change is delivered or counted, in order, the last one is the last value, and far fewer were held.
    private func check(_ changes: [Change]) {
        let indexes = changes.compactMap(Self.index)
        #expect(indexes.count == changes.count && indexes == indexes.sorted() && indexes.last == Self.sets - 1)
        #expect(changes.reduce(0) { $0 + 1 + ($1.coalesced ?? 0) } == Self.sets, "every change accounted for")
        #expect(changes.count < Self.sets / 4, "\(changes.count) changes delivered of \(Self.sets)")
    }

    @Test(.timeLimit(.minutes(1))) func aStreamNotReadWhileChangesPourInHoldsTheLatestAndCountsTheRest() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(configuration: .init(socketPath: kvod.socketPath,
                                                                subscriberBufferLimit: 64 << 10))
        var changes = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await setFlatOut(kvod)
        try await connection.ping()  // every event came before its reply
        var received: [Change] = []
        while let change = try await changes.next() {
            received.append(change)
            if Self.index(change) == Self.sets - 1 { break }
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
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await setFlatOut(kvod)
        try await connection.ping()
        gate.signal()
        try await waitUntil("the last change ran", timeout: 20) { () async -> Bool in
            queue.sync { observer.changes.last.flatMap(Self.index) == Self.sets - 1 }
        }
        check(queue.sync { observer.changes })
    }
}
