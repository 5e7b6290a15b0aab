import Foundation
import KVOClient
import KVOTestSupport
import KVOValues
import Testing

/// The batch recipe's run, shared by RecipeTests (one kvod) and ClusterRecipeTests (two over etcd).
extension RecipeTests {
    struct Move: CustomStringConvertible {
        /// The batch's events (object, keyPath, new), adjacent in the observer's stream.
        var told: [[JSONValue?]] = []
        var seqs: [Int] = []
        /// kvoctl's status, the first run and the second.
        var statuses: [Int32] = []
        /// The second run's error message.
        var refusal = ""
        var description: String { "told \(told), seqs \(seqs), statuses \(statuses), refusal \(refusal)" }
    }

    /// Runs the batch recipe through `kvod` twice, observed on `observing`, while another client of
    /// `observing` writes a third queue flat out; checks the events came adjacent and the second run changed nothing.
    static func moveJob(through kvod: KVODProcess, observedOn observing: KVODProcess) async throws -> Move {
        let connection = try KVOConnection(socketPath: observing.socketPath)
        try await connection.set("queue/pending", "job7", to: ["cmd": "backup"] as JSONValue)
        let observer = try Self.background(observing, ["observe", "--prefix", "queue/", "job7", "--new"])
        try await Self.waitForObservations(connection, 1)
        let writer = Task(executorPreference: TestThreads.shared) {
            var count = 0
            while !Task.isCancelled { try await connection.set("queue/other", "job7", to: count); count += 1 }
        }
        try await waitUntil("the writer writes", timeout: 30) { () async -> Bool in Self.events(observer).count > 20 }
        let batch = try Self.recipe("A batch")
        let moved = try await Self.shell(kvod, batch).wait()
        try await waitUntil("the writer writes on", timeout: 30) { () async -> Bool in
            Self.events(observer).contains { $0["object"] == "queue/running" }
                && Self.events(observer).last?["object"] == "queue/other"
        }
        writer.cancel()
        _ = await writer.result
        var move = Move(statuses: [moved.status])
        let seq = Int(moved.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let events = Self.events(observer)
        let first = try #require(events.firstIndex { $0["object"] != "queue/other" })
        for event in events[first...].prefix(2) {
            move.told.append([event["object"], event["keyPath"], event["new"]])
            move.seqs.append(event["seq"]?.intValue ?? -1)
        }
        #expect(move.seqs.last == seq, "kvoctl printed the seq of the batch's last change: \(moved)")

        // Run again: the job is no longer pending; nothing changes on either kvod.
        let seqBefore = try await connection.info().seq
        let again = try await Self.shell(kvod, batch).wait()
        move.statuses.append(again.status)
        move.refusal = again.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await connection.info().seq == seqBefore)
        #expect(try await connection.get("queue/running", "job7") == ["cmd": "backup"])
        return move
    }
}
