import Foundation
import Glibc
import KVOClient
import KVOTestSupport
import Testing

/// The crash test of issue 7: writers send 100,000 sets over several
/// connections while kvod (`--sync always`) is killed with SIGKILL at random
/// moments and restarted, five times. Every acknowledged set must be there
/// after each restart, seq must never go back, and an observer using
/// KVOClient's reconnect must see every acknowledged change exactly once, in
/// order.
@Suite(.onDedicatedThread) struct CrashRecoveryTests {
    static let writers = 4
    /// A fifth under a sanitizer (scripts/ci/sanitizers.sh sets KVOD_TEST_SANITIZER): each set is an fsync
    /// either way, and the sanitized client and kvod are several times slower.
    static let setsPerWriter = ProcessInfo.processInfo.environment["KVOD_TEST_SANITIZER"] == nil ? 25_000 : 5_000
    static let kills = 5

    @Test(.timeLimit(.minutes(5)))
    func acknowledgedSetsSurviveFiveSigkillsAndAnObserverSeesEachOnceInOrder() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/kvod.sock"
        let arguments = ["--data-dir", directory + "/data", "--sync", "always", "--log-level", "warning"]
        var kvod = try await KVODProcess(arguments: arguments, socketPath: path)

        let observer = try KVOConnection(
            socketPath: path, reconnect: .retry(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(50)))
        let keyPaths = (0..<Self.writers).map { "w\($0)" }
        let seen = StreamRecorder(observer.changes(of: "crash", keyPaths: keyPaths, options: [.new]))
        try await waitUntil("the observer is registered", timeout: 20) {
            (try? await observer.observations().count) == Self.writers
        }

        let gate = Gate()
        let writers = keyPaths.map {
            PipelinedWriter(object: "crash", keyPath: $0, total: Self.setsPerWriter, window: 64, socketPath: path,
                            gate: gate)
        }
        for writer in writers { writer.start() }
        let total = Self.writers * Self.setsPerWriter
        // A random moment in each sixth of the run.
        var rng = SystemRandomNumberGenerator()
        let moments = (0..<Self.kills).map { index in
            total * index / (Self.kills + 1) + Int.random(in: total / 12...(total / 6), using: &rng)
        }
        var highestSeq: UInt64 = 0
        for moment in moments {
            try await waitUntil("\(moment) sets are acknowledged", timeout: 120) { () async -> Bool in
                writers.reduce(0) { $0 + $1.snapshot.lastAcknowledged } >= moment
            }
            try await kvod.kill()
            try await waitUntil("every writer saw its connection break", timeout: 20) { () async -> Bool in
                writers.allSatisfy { $0.snapshot.isDisconnected || $0.snapshot.isFinished }
            }
            let books = writers.map(\.snapshot)
            highestSeq = max(highestSeq, books.map(\.lastAcknowledgedSeq).max() ?? 0)
            kvod = try await KVODProcess(arguments: arguments, socketPath: path)
            let checker = try KVOConnection(socketPath: path)
            #expect(try await checker.info().seq >= highestSeq, "seq went back after a restart")
            for (keyPath, book) in zip(keyPaths, books) {
                // The last acknowledged value, or a later one that was applied and not yet acknowledged.
                let value = try await checker.get(Int.self, "crash", keyPath)
                #expect(value >= book.lastAcknowledged && value <= book.lastSent,
                        "\(keyPath) is \(value) after a restart; acknowledged \(book.lastAcknowledged), sent \(book.lastSent)")
            }
            checker.close()
            gate.open()
        }
        try await waitUntil("every writer is done", timeout: 120) { () async -> Bool in writers.allSatisfy { $0.snapshot.isFinished } }
        for writer in writers {
            #expect(writer.snapshot.failure == nil, "\(writer.snapshot.failure ?? "")")
            #expect(writer.snapshot.lastAcknowledged == Self.setsPerWriter)
        }

        // The observer: each key path's values rise one change at a time with
        // no repeat, and include every acknowledged value (here: all of them).
        try await waitUntil("the observer saw the last value of every writer", timeout: 120) { () async -> Bool in
            let last = Dictionary(seen.changes.values.map { ($0.keyPath, $0.new) }, uniquingKeysWith: { _, new in new })
            return keyPaths.allSatisfy { last[$0] == .number(JSONNumber(Self.setsPerWriter)) }
        }
        #expect(seen.errors.count == 0, "\(seen.errors.values)")
        let changes = seen.changes.values
        for (keyPath, writer) in zip(keyPaths, writers) {
            let mine = changes.filter { $0.keyPath == keyPath }
            #expect(zip(mine, mine.dropFirst()).allSatisfy { $0.seq < $1.seq }, "\(keyPath): in seq order, none twice")
            let values = mine.compactMap { change -> Int? in
                if case .number(let number)? = change.new { return number.intValue }
                return nil
            }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "\(keyPath): values in order, none twice")
            // Every acknowledged value; of the ones in flight at a kill, those that were applied.
            let unacknowledged = writer.snapshot.unacknowledged
            let missing = Set(1...Self.setsPerWriter).subtracting(values).subtracting(unacknowledged)
            #expect(missing.isEmpty, "\(keyPath): acknowledged and never seen: \(missing.sorted().prefix(10))")
            #expect(values.allSatisfy { (1...Self.setsPerWriter).contains($0) })
        }
        observer.close()
        _ = kvod
    }
}
