import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Prefix observations, in both styles, against the real kvod.
@Suite(.onDedicatedThread) struct PrefixObservationTests {
    @Test func prefixStreamSendsOneInitialPerObjectInListOrderThenObjectsCreatedLater() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("services/web", "addr", to: "10.0.0.5:80")
        try await connection.set("services/db", "addr", to: "10.0.0.6:5432")
        try await connection.set("servicesX", "addr", to: "elsewhere")
        let changes = StreamRecorder(connection.changes(prefix: "services/", keyPath: "addr", options: [.new, .initial]))
        let initial = try await changes.changes.waitForCount(2)
        let (first, second) = (initial[0], initial[1])
        #expect([first.object, second.object] == ["services/db", "services/web"])
        #expect(first.isInitial && second.isInitial && first.new == "10.0.0.6:5432" && second.new == "10.0.0.5:80")
        #expect(first.prefix == "services/" && first.keyPath == "addr")

        try await connection.set("other/api", "addr", to: "no")
        let seq = try await connection.set("services/api", "addr", to: "10.0.0.7:443")
        let created = try await changes.changes.waitForCount(3)[2]
        #expect(created.object == "services/api" && !created.isInitial && created.seq == seq,
                "an object created later under the prefix is observed; one outside it is not")
        #expect(created.prefix == "services/" && created.new == "10.0.0.7:443")

        let records = try await connection.observations()
        #expect(records.count == 1)
        #expect(records.first?.isPrefix == true && records.first?.prefix == "services/"
                && records.first?.keyPath == "addr")
    }

    @Test func wholeDocumentPrefixStreamAndTheEmptyPrefix() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let everything = StreamRecorder(connection.changes(prefix: "", options: [.new]))
        try await waitUntil("the prefix observation is registered", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await connection.set("a", "x.y", to: 1)
        let change = try await everything.changes.waitForCount(1)[0]
        #expect(change.object == "a" && change.prefix == "" && change.keyPath == nil)
        #expect(change.new == ["x": ["y": 1]] && change.changedKeyPath == "x.y")
    }

    @Test func prefixStreamOfSeveralKeyPathsAndCancellingIt() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let recorder = StreamRecorder(connection.changes(prefix: "s/", keyPaths: ["a", "b"], options: [.new]))
        try await waitUntil("both prefix observations are registered", timeout: 10) {
            try await connection.observations().count == 2
        }
        try await connection.set("s/1", "b", to: 1)
        try await connection.set("s/2", "a", to: 2)
        let changes = try await recorder.changes.waitForCount(2)
        #expect(changes.map(\.keyPath) == ["b", "a"] && changes.map(\.object) == ["s/1", "s/2"])
        recorder.cancel()
        try await waitUntil("the daemon holds no observation", timeout: 10) {
            try await connection.observations().isEmpty
        }
    }

    @Test func secondPrefixObserverWithInitialFailsAndTheFirstKeepsGoing() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let first = StreamRecorder(connection.changes(prefix: "s/", keyPath: "k", options: [.new]))
        let second = StreamRecorder(connection.changes(prefix: "s/", keyPath: "k", options: [.initial]))
        #expect(try await second.errors.waitForCount(1).map(\.code) == [.badRequest])
        try await connection.set("s/x", "k", to: 1)
        #expect(try await first.changes.waitForCount(1).map(\.new) == [1])
        #expect(second.changes.count == 0)
    }

    @Test func prefixAndObjectOfTheSameNameAreTwoObservations() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let exact = StreamRecorder(connection.changes(of: "s/1", keyPath: "k", options: [.new]))
        let prefix = StreamRecorder(connection.changes(prefix: "s/1", keyPath: "k", options: [.new]))
        try await waitUntil("both are registered", timeout: 10) { try await connection.observations().count == 2 }
        try await connection.set("s/1", "k", to: 1)
        try await connection.set("s/10", "k", to: 2)
        #expect(try await prefix.changes.waitForCount(2).map(\.object) == ["s/1", "s/10"])
        #expect(try await exact.changes.waitForCount(1).map(\.prefix) == [nil])
        #expect(exact.changes.count == 1, "the object's own observation does not get the prefix's events")
    }

    @Test func controllerObservesPrefixesAndWholeDocumentsAndUnobservesThem() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("services/web", "addr", to: "a")
        let observer = RecordingObserver()
        let objects = Recorder<String>()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe(prefix: "services/", keyPath: "addr", options: [.new, .initial]) { observer, object, change in
            objects.append(object)
            observer.changes.append(change)
        }
        controller.observe("person/1", options: [.new], action: RecordingObserver.nameChanged)
        let initial = try await observer.changes.waitForCount(1)
        #expect(initial.first?.isInitial == true && objects.values == ["services/web"])
        try await waitUntil("both are registered", timeout: 10) { try await connection.observations().count == 2 }
        try await connection.set("services/db", "addr", to: "b")
        try await connection.set("person/1", "name", to: "x")
        let all = try await observer.changes.waitForCount(3)
        #expect(objects.values == ["services/web", "services/db"])
        #expect(all[2].object == "person/1" && all[2].keyPath == nil && all[2].changedKeyPath == "name")

        controller.unobserve(prefix: "services/")
        controller.unobserve("person/1", keyPath: nil)
        try await waitUntil("the daemon holds no observation", timeout: 10) {
            try await connection.observations().isEmpty
        }
        try await connection.set("services/x", "addr", to: "c")
        try await connection.set("person/1", "name", to: "y")
        try await connection.ping()
        await drain(controller.queue)
        #expect(observer.changes.count == 3, "nothing arrives once unobserved")
    }

    @Test func prefixAndWholeDocumentObservationsResumeAfterARestartExactlyOnce() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        let arguments = ["--data-dir", directory + "/data"]
        var kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        let connection = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(300), maximumDelay: .milliseconds(300)))
        let prefix = StreamRecorder(connection.changes(prefix: "s/", keyPath: "k", options: [.new]))
        let document = StreamRecorder(connection.changes(of: "d", options: [.new]))
        try await connection.set("s/1", "k", to: 1)
        try await connection.set("d", "n", to: 1)
        try await prefix.changes.waitForCount(1)
        try await document.changes.waitForCount(1)

        try await kvod.kill()
        kvod = try await KVODProcess(arguments: arguments, socketPath: path)
        let writer = try KVOConnection(socketPath: path)
        try await writer.set("s/2", "k", to: 2)
        try await writer.set("d", "n", to: 2)
        try await waitUntil("the connection is back with both observations", timeout: 20) {
            (try? await connection.observations().count) == 2
        }
        let records = try await connection.observations()
        #expect(Set(records.map(\.isPrefix)) == [true, false])
        try await writer.set("s/3", "k", to: 3)
        try await writer.set("d", "n", to: 3)
        #expect(try await prefix.changes.waitForCount(3).map(\.object) == ["s/1", "s/2", "s/3"])
        #expect(try await document.changes.waitForCount(3).map(\.new) == [["n": 1], ["n": 2], ["n": 3]])
        try await writer.ping()
        try await connection.ping()
        #expect(prefix.changes.count == 3 && document.changes.count == 3, "each change arrives once")
        #expect(prefix.errors.count == 0 && document.errors.count == 0)
    }
}
