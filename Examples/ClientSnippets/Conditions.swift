// docs/CLIENT.md, "Conditions, batches and values that go by themselves"; run by ClientSnippets.
// snippet.hide
import KVOClient

enum ConditionsSnippet {
    /// Prints `1 -4096`, `workers: 4`, then the batch's seqs.
    static func run(socketPath: String) async throws {
        let connection = try KVOConnection(socketPath: socketPath)
        try await connection.set("config/web", "workers", to: 2)
        try await connection.set("queue/pending", "job7", to: ["cmd": "backup"])
        try await snippet(connection)
    }

    static func snippet(_ connection: KVOConnection) async throws {
        // snippet.show
        // A counter that loses no increment, whoever else increments it at the same time: one `add`,
        // no read and no retry (nothing there counts as 0). It returns the sum it wrote.
        let jobs = try await connection.add("counters/jobs", "n")               // by: 1
        let left = try await connection.add("quota/alice", "bytes", by: -4096)
        print(jobs, left)

        // A value that is not a plain read-modify-write: read it with its modSeq, write it only if
        // nobody changed it since, and read again when someone was faster. compareAndSet says
        // which happened (.applied or .conflict: nothing changed) rather than throwing.
        func double(_ connection: KVOConnection) async throws -> Int {
            while true {
                let current = try await connection.getVersioned("config/web", "workers")
                let doubled = try current.decode(Int.self) * 2
                switch try await connection.compareAndSet("config/web", "workers", to: doubled,
                                                          ifModSeq: current.modSeq) {
                case .applied: return doubled
                case .conflict: continue  // someone else was faster: read again
                }
            }
        }
        print("workers:", try await double(connection))

        // A presence that lasts as long as this connection, and a session that lasts 30 s unless renewed.
        try await connection.set("services/web", "addr", to: "10.0.0.5:80", ephemeral: true)
        try await connection.set("session/42", "user", to: "xsc", ttl: .seconds(30))

        // Two changes as one: all or none, and observers get their events back to back.
        let moved = try await connection.batch([
            .delete("queue/pending", "job7", ifValue: ["cmd": "backup"]),
            .set("queue/running", "job7", to: ["cmd": "backup"]),
        ])
        print(moved.seq, moved.seqs)   // the last change's seq, and each op's (nil: it changed nothing)
        // snippet.hide
    }
}
