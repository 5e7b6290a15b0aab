import KVOClient
import KVOTestSupport
import Testing

/// `compareAndSet`: a condition that does not hold is a result, not an error.
@Suite(.onDedicatedThread) struct CompareAndSetTests {
    @Test func aHeldConditionAppliesAndAMissIsAConflictWithTheCurrentModSeq() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let created = try await connection.compareAndSet("config/web", "workers", to: 2, ifModSeq: 0)
        guard case .applied(let seq) = created else { Issue.record("create-only set was not applied"); return }
        #expect(try await connection.getVersioned("config/web", "workers").modSeq == seq)

        // A stale modSeq, then a stale value: each a conflict naming the current modSeq, and nothing changed.
        #expect(try await connection.compareAndSet("config/web", "workers", to: 9, ifModSeq: 0) == .conflict(modSeq: seq))
        #expect(try await connection.compareAndSet("config/web", "workers", to: 9, ifValue: 3) == .conflict(modSeq: seq))
        #expect(try await connection.compareAndSet("config/web", "missing", to: 9, ifModSeq: seq) == .conflict(modSeq: 0))
        #expect(try await connection.get(Int.self, "config/web", "workers") == 2)

        let doubled = try await connection.compareAndSet("config/web", "workers", to: 4 as JSONValue, ifValue: 2)
        #expect(doubled.isApplied)
        #expect(try await connection.get(Int.self, "config/web", "workers") == 4)
    }

    @Test func otherErrorsStillThrow() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("o", "n", to: 1)
        await #expect(throws: KVOClientError.self) {
            _ = try await connection.compareAndSet("o", "n.deeper", to: 2)  // n is no object: not_an_object
        }
        let conflict = try await connection.compareAndPerform(.delete("o", "n", ifValue: 5))
        #expect(!conflict.isApplied)
    }

    /// The docs' loop, as a value-returning function: with two writers racing, each
    /// doubling applies exactly once, so 2 doubled by 10 of them is 2^11.
    @Test func theGuidesLoopLosesNoUpdateUnderContention() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        try await connection.set("config/web", "workers", to: 2)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 { group.addTask { try await double(connection) } }
            try await group.waitForAll()
        }
        #expect(try await connection.get(Int.self, "config/web", "workers") == 2048)
    }

    func double(_ connection: KVOConnection) async throws -> Int {
        while true {
            let current = try await connection.getVersioned("config/web", "workers")
            let doubled = try current.decode(Int.self) * 2
            if case .applied = try await connection.compareAndSet("config/web", "workers", to: doubled,
                                                                  ifModSeq: current.modSeq) { return doubled }
        }
    }
}
