import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `connection.changes(of:keyPath:options:)` against the real kvod.
@Suite(.onDedicatedThread) struct ChangeStreamTests {
    @Test func streamDeliversInitialThenEveryChangeWithItsOptions() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let before = try await connection.set("p", "name", to: "a")
        var changes = connection.changes(of: "p", keyPath: "name", options: [.new, .old, .initial], context: 7)
            .makeAsyncIterator()
        let initial = try #require(try await changes.next())
        #expect(initial.isInitial && initial.kind == .setting)
        #expect(initial.new == "a" && initial.old == nil)
        #expect(initial.seq == before, "the daemon's initial event carries the current seq")
        #expect(initial.context == 7)
        let seq = try await connection.set("p", "name", to: "b")
        let change = try #require(try await changes.next())
        #expect(!change.isInitial && !change.isPrior)
        #expect(change.new == "b" && change.old == "a" && change.seq == seq && change.keyPath == "name")
    }

    @Test func streamOfSeveralKeyPathsMergesThemInDaemonOrder() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var changes = connection.changes(of: "p", keyPaths: ["a", "b"], options: [.new]).makeAsyncIterator()
        try await connection.set("p", "b", to: 1)
        try await connection.set("p", "a", to: 2)
        #expect(try await changes.next()?.keyPath == "b")
        #expect(try await changes.next()?.keyPath == "a")
        #expect(try await connection.observations().count == 2)
    }

    @Test func cancellingTheConsumingTaskUnobservesOnTheDaemon() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let received = Recorder<Change>()
        let stream = connection.changes(of: "o", keyPath: "k", options: [.new])
        let consumer = Task(executorPreference: TestThreads.shared) {
            for try await change in stream { received.append(change) }
        }
        try await connection.set("o", "k", to: 1)
        try await received.waitForCount(1)
        #expect(try await connection.observations().map(\.keyPath) == ["k"])
        consumer.cancel()
        try await waitUntil("the daemon holds no observation", timeout: 10) {
            try await connection.observations().isEmpty
        }
        try await connection.set("o", "k", to: 2)
        #expect(received.count == 1)
    }

    @Test func daemonKilledUnderAConnectedClientEndsTheStreamWithAnError() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let stream = connection.changes(of: "o", keyPath: "k", options: [.new])
        let consumer = Task(executorPreference: TestThreads.shared) { () -> KVOClientError? in
            do {
                for try await _ in stream {}
                return nil
            } catch {
                return error as? KVOClientError
            }
        }
        #expect(try await connection.observations().count == 1)
        try await kvod.kill()
        let error = try await withDeadline("the stream to end", seconds: 10) { await consumer.value }
        #expect(error?.code == .connectionLost)
        await #expect(throws: KVOClientError.self) { try await connection.ping() }
    }

    @Test func secondObserverOfAKeyPathGetsItsOwnInitialAndOptions() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("p", "k", to: 1)
        var first = connection.changes(of: "p", keyPath: "k", options: [.new]).makeAsyncIterator()
        try await connection.set("p", "k", to: 2)
        #expect(try await first.next()?.new == 2)
        let second = connection.changes(of: "p", keyPath: "k", options: [.old, .initial, .prior], context: "two")
        var secondChanges = second.makeAsyncIterator()
        let initial = try #require(try await secondChanges.next())
        #expect(initial.isInitial && initial.new == nil && initial.context == "two",
                "initial without .new carries no value")
        // One observation on the daemon, shared.
        #expect(try await connection.observations().count == 1)
        let seq = try await connection.set("p", "k", to: 3)
        let prior = try #require(try await secondChanges.next())
        let after = try #require(try await secondChanges.next())
        #expect(prior.isPrior && prior.old == 2 && prior.new == nil && prior.seq == seq)
        #expect(!after.isPrior && after.old == 2 && after.new == nil)
        let firstsChange = try #require(try await first.next())
        #expect(!firstsChange.isPrior, "the first stream did not ask for prior")
        #expect(firstsChange.new == 3 && firstsChange.old == nil && firstsChange.context == nil)
    }

    @Test func joiningObserverWithInitialAndNewGetsTheCurrentValue() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var first = connection.changes(of: "p", keyPath: "k", options: [.new]).makeAsyncIterator()
        let seq = try await connection.set("p", "k", to: "now")
        #expect(try await first.next()?.new == "now")
        var joiner = connection.changes(of: "p", keyPath: "k", options: [.new, .initial]).makeAsyncIterator()
        let initial = try #require(try await joiner.next())
        #expect(initial.isInitial && initial.new == "now" && initial.seq == seq)
        var missing = connection.changes(of: "p", keyPath: "absent", options: [.new, .initial]).makeAsyncIterator()
        #expect(try await missing.next()?.new == .null, "a missing value is null")
    }

    /// A joiner's initial change comes from a `get`; its seq is the one the
    /// value is as of, also when other connections moved the daemon's seq on
    /// with changes this connection never heard of, and also for no value.
    @Test func joiningObserverInitialCarriesTheSeqOfItsGet() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let other = try connect(kvod)
        var first = connection.changes(of: "p", keyPath: "k", options: [.new]).makeAsyncIterator()
        let absentFirst = connection.changes(of: "p", keyPath: "absent", options: [.new])
        _ = try await connection.set("p", "k", to: "now")
        #expect(try await first.next()?.new == "now")
        _ = try await other.set("q", "x", to: 1)
        let current = try await other.set("q", "x", to: 2)

        var joiner = connection.changes(of: "p", keyPath: "k", options: [.new, .initial]).makeAsyncIterator()
        let initial = try #require(try await joiner.next())
        #expect(initial.isInitial && initial.new == "now")
        #expect(initial.seq == current, "the seq of the get, not the newest this connection saw")
        let later = try await other.set("q", "x", to: 3)
        var absentJoiner = connection.changes(of: "p", keyPath: "absent", options: [.new, .initial])
            .makeAsyncIterator()
        let none = try #require(try await absentJoiner.next())
        #expect(none.isInitial && none.new == .null)
        #expect(none.seq == later, "not_found from the get carries its seq too")
        withExtendedLifetime(absentFirst) {}
    }

    @Test func malformedKeyPathEndsTheStreamWithTheDaemonsError() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var changes = connection.changes(of: "p", keyPath: "a..b").makeAsyncIterator()
        do {
            _ = try await changes.next()
            Issue.record("a malformed key path was observed")
        } catch {
            #expect(error.code == .badRequest)
        }
        #expect(try await connection.observations().isEmpty)
    }
}
