// docs/CLIENT.md, "Conditions, batches and values that go by themselves"; built, not run (it needs state set up first).
// snippet.hide
import KVOClient

func conditionsSnippet(_ connection: KVOConnection) async throws {
    // snippet.show
    // A counter that loses no increment, whoever else increments it at the same time.
    func increment(_ connection: KVOConnection) async throws {
        while true {
            do {
                let current = try await connection.getVersioned("counters/jobs", "n")
                try await connection.set("counters/jobs", "n", to: try current.decode(Int.self) + 1,
                                         ifModSeq: current.modSeq)
                return
            } catch let error where error.code == .notFound {
                do { try await connection.set("counters/jobs", "n", to: 1, ifModSeq: 0); return }
                catch let error where error.code == .preconditionFailed { continue }
            } catch let error where error.code == .preconditionFailed {
                continue  // someone else was faster: read again
            }
        }
    }

    // A presence that lasts as long as this connection, and a session that lasts 30 s unless renewed.
    try await connection.set("services/web", "addr", to: "10.0.0.5:80", ephemeral: true)
    try await connection.set("session/42", "user", to: "xsc", ttl: .seconds(30))

    // Two changes as one: all or none, and observers get their events back to back.
    let moved = try await connection.batch([
        .delete("queue/pending", "job7", ifValue: ["cmd": "backup"]),
        .set("queue/running", "job7", to: ["cmd": "backup"] as JSONValue),
    ])
    print(moved.seq, moved.seqs)   // the last change's seq, and each op's (nil: it changed nothing)
    // snippet.hide
}
