// docs/CLIENT.md, "Threads, tasks and actors"; run by ClientSnippets.
// snippet.hide
import KVOClient

// snippet.show
/// A model confined to the main actor, kept up to date by a controller whose queue is the main queue.
@MainActor
final class StatusModel {
    var status = "?"
    private var kvo: KVOController<StatusModel>?

    func start(connection: KVOConnection) {
        let kvo = KVOController(observer: self, connection: connection, queue: .main)
        kvo.observe("printer/1", keyPath: "status", options: [.new, .initial]) { model, _, change in
            // The block runs on `queue`, here the main queue; assumeIsolated checks that at run time.
            MainActor.assumeIsolated { model.status = (try? change.new(as: String.self)) ?? "?" }
        }
        self.kvo = kvo
    }
}

/// Any task may use the connection: it is Sendable, and concurrent requests pipeline on its one socket.
func markIdle(_ printers: [String], on connection: KVOConnection) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for printer in printers {
            group.addTask { try await connection.set(printer, "status", to: "idle") }
        }
        try await group.waitForAll()
    }
}

/// A stream is made anywhere (observing starts then) and iterated by one task: here a
/// main-actor function, so the loop body runs on the main actor.
@MainActor
func follow(_ changes: ChangeStream, into model: StatusModel, until last: String) async throws {
    for try await change in changes {
        model.status = (try? change.new(as: String.self)) ?? "?"
        if model.status == last { break }  // leaving the loop unobserves
    }
}
// snippet.hide

enum IsolationSnippet {
    /// Prints `status: idle`, then `followed: done`.
    @MainActor
    static func run(socketPath: String) async throws {
        let connection = try KVOConnection(socketPath: socketPath)
        try await markIdle(["printer/1", "printer/2", "printer/3"], on: connection)
        let model = StatusModel()
        model.start(connection: connection)
        // The initial change was queued on the main queue before this reply came; the
        // await hands the main actor back, so it has run once the await returns.
        _ = try await connection.get("printer/1", "status")
        await Task.yield()
        print("status:", model.status)
        let follower = StatusModel()
        let changes = connection.changes(of: "printer/1", keyPath: "status", options: [.new])
        async let followed: Void = follow(changes, into: follower, until: "done")
        try await connection.set("printer/1", "status", to: "busy")
        try await connection.set("printer/1", "status", to: "done")
        try await followed
        print("followed:", follower.status)
    }
}
