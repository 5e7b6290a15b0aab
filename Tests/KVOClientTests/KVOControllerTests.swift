import Dispatch
import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// KVOController's interface against the real kvod.
@Suite(.onDedicatedThread) struct KVOControllerTests {
    @Test func everyOptionAndKindReachesTheBlock() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("doc", "list", to: [1, 2])
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("doc", keyPath: "list", options: [.new, .old, .initial, .prior], context: "ctx") {
            observer, object, change in
            #expect(object == "doc")
            observer.changes.append(change)
        }
        let set = try await connection.set("doc", "list", to: ["a"])
        let insert = try await connection.insert("doc", "list", ["b", "c"], at: 1)
        let remove = try await connection.remove("doc", "list", at: [0])
        let replace = try await connection.replace("doc", "list", at: [1], with: ["z"])
        let changes = try await observer.changes.waitForCount(9)
        #expect(changes.count == 9)
        #expect(changes.allSatisfy { $0.context == "ctx" && $0.keyPath == "list" && $0.object == "doc" })

        let initial = changes[0]
        #expect(initial.isInitial && initial.kind == .setting && initial.new == [1, 2] && initial.old == nil)
        #expect(initial.seq < set)

        typealias Values = (old: JSONValue?, new: JSONValue?)
        let expected: [(ChangeKind, UInt64, [Int]?, prior: Values, after: Values)] = [
            (.setting, set, nil, (old: [1, 2], new: nil), (old: [1, 2], new: ["a"])),
            (.insertion, insert, [1, 2], (old: nil, new: nil), (old: nil, new: ["b", "c"])),
            (.removal, remove, [0], (old: ["a"], new: nil), (old: ["a"], new: nil)),
            (.replacement, replace, [1], (old: ["c"], new: nil), (old: ["c"], new: ["z"])),
        ]
        for (index, (kind, seq, indexes, prior, after)) in expected.enumerated() {
            let priorChange = changes[1 + 2 * index]
            let change = changes[2 + 2 * index]
            #expect(priorChange.isPrior && !change.isPrior, "\(kind)")
            #expect(priorChange.kind == kind && change.kind == kind)
            #expect(priorChange.seq == seq && change.seq == seq)
            #expect(priorChange.indexes == indexes && change.indexes == indexes, "\(kind)")
            #expect(priorChange.old == prior.old && priorChange.new == prior.new, "\(kind) prior")
            #expect(change.old == after.old && change.new == after.new, "\(kind)")
        }
        _ = controller
    }

    @Test func withoutOptionsTheBlockGetsKindAndIndexesButNoValues() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("doc", keyPath: "list") { observer, _, change in observer.changes.append(change) }
        try await connection.insert("doc", "list", [1])
        try await connection.set("doc", "list", to: [2])
        let changes = try await observer.changes.waitForCount(2)
        #expect(changes.map(\.kind) == [.insertion, .setting])
        #expect(changes[0].indexes == [0])
        #expect(changes.allSatisfy { $0.new == nil && $0.old == nil && !$0.isPrior && !$0.isInitial })
    }

    @Test func actionFormCallsTheUnboundMethodOnTheObserver() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("person/1", keyPaths: ["name", "nick"], options: [.new],
                           action: RecordingObserver.nameChanged)
        try await connection.set("person/1", "name", to: "xsc")
        try await connection.set("person/1", "nick", to: "x")
        let changes = try await observer.changes.waitForCount(2)
        #expect(changes.map(\.keyPath) == ["name", "nick"])
        #expect(try changes[0].new(as: String.self) == "xsc")
    }

    @Test func releasedObserverGetsNoCallbackAndItsObservationIsWithdrawn() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let queue = DispatchQueue(label: "callbacks")
        var observer: RecordingObserver? = RecordingObserver()
        let recorded = try #require(observer).changes
        let controller = KVOController(observer: try #require(observer), connection: connection, queue: queue)
        controller.observe("o", keyPath: "k", options: [.new]) { observer, _, change in
            observer.changes.append(change)
        }
        try await connection.set("o", "k", to: 1)
        try await recorded.waitForCount(1)
        // The callback that recorded it may still hold the observer on its queue.
        await drain(queue)
        observer = nil
        #expect(controller.observer == nil)
        try await connection.set("o", "k", to: 2)
        await drain(queue)
        #expect(recorded.count == 1, "no callback reached the released observer")
        // Finding its observer gone, the controller withdrew the observation.
        #expect(try await connection.observations().isEmpty)
    }

    @Test func controllerDeinitUnobservesOnTheDaemon() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        var controller: KVOController<RecordingObserver>? = KVOController(observer: observer, connection: connection)
        controller?.observe("o", keyPaths: ["a", "b"]) { _, _, _ in }
        #expect(try await connection.observations().count == 2)
        controller = nil
        #expect(try await connection.observations().isEmpty)
        #expect(try await connection.info().observations == 0)
    }

    @Test func observingTheSameKeyPathTwiceKeepsOneObservation() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let queue = DispatchQueue(label: "callbacks")
        let one = RecordingObserver()
        let two = RecordingObserver()
        let first = KVOController(observer: one, connection: connection, queue: queue)
        let second = KVOController(observer: two, connection: connection, queue: queue)
        first.observe("o", keyPath: "k", options: [.new]) { observer, _, change in observer.changes.append(change) }
        first.observe("o", keyPath: "k", options: [.old]) { observer, _, change in observer.changes.append(change) }
        second.observe("o", keyPath: "k", options: [.new, .old]) { observer, _, change in
            observer.changes.append(change)
        }
        #expect(try await connection.observations().count == 1, "one daemon observation for the whole connection")
        try await connection.set("o", "k", to: 1)
        await drain(queue)
        #expect(one.changes.values.map(\.new) == [1], "the first registration (options .new) stays")
        #expect(one.changes.values.map(\.old) == [nil])
        #expect(two.changes.values.map(\.old) == [.null])
        first.unobserve("o", keyPath: "k")
        try await connection.set("o", "k", to: 2)
        await drain(queue)
        #expect(one.changes.count == 1)
        #expect(two.changes.count == 2)
        #expect(try await connection.observations().count == 1)
        second.unobserve("o")
        #expect(try await connection.observations().isEmpty)
    }

    @Test func unobserveInsideTheInitialCallbackIsSafe() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let queue = DispatchQueue(label: "callbacks")
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection, queue: queue)
        controller.observe("o", keyPath: "k", options: [.new, .initial]) { [weak controller] observer, object, change in
            controller?.unobserve(object, keyPath: change.keyPath)
            observer.changes.append(change)
        }
        let changes = try await observer.changes.waitForCount(1)
        #expect(changes.first?.isInitial == true)
        #expect(try await connection.observations().isEmpty)
        try await connection.set("o", "k", to: 1)
        await drain(queue)
        #expect(observer.changes.count == 1)
        // The controller is still usable afterwards.
        controller.observe("o", keyPath: "k", options: [.new]) { observer, _, change in
            observer.changes.append(change)
        }
        try await connection.set("o", "k", to: 2)
        #expect(try await observer.changes.waitForCount(2).last?.new == 2)
    }

    @Test func unobserveInsideAChangeCallbackStopsFurtherCallbacks() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let queue = DispatchQueue(label: "callbacks")
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection, queue: queue)
        controller.observe("o", keyPath: "k", options: [.new]) { [weak controller] observer, _, change in
            observer.changes.append(change)
            controller?.unobserveAll()
        }
        // Hold the queue until three changes are queued on it: only the first is delivered.
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + 10) }
        try await connection.set("o", "k", to: 1)
        try await connection.set("o", "k", to: 2)
        try await connection.set("o", "k", to: 3)
        gate.signal()
        await drain(queue)
        #expect(observer.changes.values.map(\.new) == [1])
    }

    @Test func lostConnectionIsReportedOnceToTheErrorHandler() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection) { observer, error in
            observer.errors.append(error)
        }
        controller.observe("o", keyPaths: ["a", "b", "c"]) { _, _, _ in }
        #expect(try await connection.observations().count == 3)
        try await kvod.kill()
        let errors = try await observer.errors.waitForCount(1)
        #expect(errors.first?.code == .connectionLost)
        await drain(controller.queue)
        #expect(observer.errors.count == 1)
    }

    @Test func daemonRefusingAnObservationIsReported() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection) { observer, error in
            observer.errors.append(error)
        }
        controller.observe("o", keyPath: "a..b") { _, _, _ in }
        #expect(try await observer.errors.waitForCount(1).first?.code == .badRequest)
        #expect(controller.debugDescription.contains("a..b") == false, "the refused observation is forgotten")
    }
}
