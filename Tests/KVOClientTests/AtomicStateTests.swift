import KVOClient
import KVOTestSupport
import Testing

/// Conditional writes, batches, ephemeral values and ttl through KVOClient, against the real kvod.
@Suite(.onDedicatedThread) struct AtomicStateTests {
    @Test func conditionalSetCreatesOnceAndAFailedConditionCarriesTheCurrentModSeq() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let created = try await connection.set("lock", "owner", to: "me", ifModSeq: 0)
        let read = try await connection.getVersioned("lock", "owner")
        #expect(read.value == "me" && read.modSeq == created && read.seq == created && !read.isEphemeral)
        #expect(read.expiresIn == nil)

        do {
            try await connection.set("lock", "owner", to: "you", ifModSeq: 0)
            Issue.record("a create-only set replaced a value")
        } catch {
            #expect(error.code == .preconditionFailed && error.modSeq == created && error.index == nil)
        }
        do {
            try await connection.delete("lock", "owner", ifValue: "you")
            Issue.record("a delete whose ifValue does not hold deleted")
        } catch {
            #expect(error.code == .preconditionFailed && error.modSeq == created)
        }
        #expect(try await connection.info().seq == created, "a failed condition consumes no seq")
        try await connection.insert("lock", "queue", [1, 2], ifModSeq: 0)
        let removed = try await connection.remove("lock", "queue", at: [0], ifValue: [1, 2])
        #expect(try await connection.getVersioned("lock", "queue").modSeq == removed)
        try await connection.replace("lock", "queue", at: [0], with: [3], ifModSeq: removed)
        #expect(try await connection.get([Int].self, "lock", "queue") == [3])
        try await connection.delete("lock", "owner", ifValue: "me")
        do {
            _ = try await connection.getVersioned("lock", "owner")
            Issue.record("a deleted value was found")
        } catch {
            #expect(error.code == .notFound && error.modSeq == 0)
        }
    }

    @Test func batchAppliesAllOrNoneAndNamesTheOpThatFailed() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("queue/pending", "job", to: 7)
        let moved = try await connection.batch([
            .delete("queue/pending", "job", ifValue: 7),
            .set("queue/running", "job", to: 7),
            .delete("queue/none"),
        ])
        #expect(moved.seqs == [moved.seq - 1, moved.seq, nil] && moved.seq == 3, "\(moved)")
        #expect(try await connection.get(Int.self, "queue/running", "job") == 7)

        do {
            try await connection.batch([
                .set("queue/pending", "job", to: 8), .delete("queue/running", "job", ifValue: 8),
            ])
            Issue.record("a batch with a failing condition was applied")
        } catch {
            #expect(error.code == .preconditionFailed && error.index == 1 && error.modSeq == 3)
        }
        #expect(try await connection.info().seq == 3, "nothing of a failed batch is applied")
        do {
            try await connection.batch([.delete("a"), try WriteOperation(request: ["op": "get", "object": "a"])])
            Issue.record("a get was accepted as a batch op")
        } catch {
            #expect(error.code == .badRequest)
        }
        let raw = try WriteOperation(request: ["op": "set", "object": "queue/raw", "keyPath": "n", "value": 1])
        #expect(try await connection.batch([raw]).seqs == [4])
    }

    @Test func ephemeralValueGoesWithItsConnectionAndTheChangeSaysWhy() async throws {
        let kvod = try await KVODProcess()
        let watcher = try connect(kvod)
        let seen = StreamRecorder(watcher.changes(of: "services/web", keyPath: "addr", options: [.new]))
        try await waitUntil("observing", timeout: 30) { () async throws -> Bool in
            try await watcher.info().observations == 1
        }

        let owner = try connect(kvod)
        try await owner.set("services/web", "addr", to: "10.0.0.5:80", ephemeral: true, ttl: .seconds(3600))
        let held = try await watcher.getVersioned("services/web", "addr")
        #expect(held.isEphemeral && held.expiresIn.map { (3590...3600).contains($0) } == true, "\(held)")
        owner.close()
        let changes = try await seen.changes.waitForCount(2)
        #expect(changes.map(\.cause) == [nil, .disconnect])
        #expect(changes.last?.new == .null)
    }

    @Test func ttlValueGoesAtItsDeadlineWithCauseTtl() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let seen = StreamRecorder(connection.changes(of: "session/1", keyPath: "user", options: [.new]))
        try await waitUntil("observing", timeout: 30) { () async throws -> Bool in
            try await connection.info().observations == 1
        }
        let sentAt = ContinuousClock.now
        try await connection.set("session/1", "user", to: "xsc", ttl: .milliseconds(1500))
        do {
            let left = try await connection.getVersioned("session/1", "user").expiresIn
            #expect(left.map { (1...2).contains($0) } == true, "1.5 s, rounded up, less what has passed: \(left as Any)")
        } catch {
            // A loaded machine can take the whole ttl between set and get.
            #expect("\(error)".contains("not_found") && ContinuousClock.now - sentAt >= .milliseconds(1500), "\(error)")
        }
        let changes = try await seen.changes.waitForCount(2, timeout: 10)
        #expect(changes.map(\.cause) == [nil, .ttl])
    }
}
