import Foundation
import KVOClient
import KVOTestSupport
import KVOValues
import Testing

/// docs/RECIPES.md: each recipe's shell block, taken from the page and run by `sh` as written,
/// against the real kvod, with kvoctl on `PATH` and `$KVOD_SOCKET` set.
@Suite(.onDedicatedThread) struct RecipeTests {
    /// The `index`th `sh` block of the section headed `heading` in docs/RECIPES.md.
    static func recipe(_ heading: String, block index: Int = 0) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/RECIPES.md"), encoding: .utf8)
        let section = try #require(page.components(separatedBy: "## \(heading)\n").dropFirst().first?
            .components(separatedBy: "\n## ").first, "docs/RECIPES.md has a section \(heading)")
        // The fence may say more after `sh` (`long-running`, `example`: scripts/ci/doc-commands.sh).
        let blocks = section.components(separatedBy: "\n```sh").dropFirst()
            .compactMap { $0.split(separator: "\n", maxSplits: 1).last?.components(separatedBy: "```").first }
        return try #require(blocks.dropFirst(index).first, "\(heading) has an sh block \(index)")
    }

    /// `sh -c script` with kvoctl on `PATH` and kvod's socket in `$KVOD_SOCKET`.
    static func shell(_ kvod: KVODProcess, _ script: String, environment: [String: String] = [:]) throws
        -> RunningCommand
    {
        let path = KVOCtl.binaryURL.deletingLastPathComponent().path + ":/usr/bin:/bin"
        return try RunningCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", script],
                                  environment: ["PATH": path, "KVOD_SOCKET": kvod.socketPath]
                                      .merging(environment) { _, new in new })
    }

    /// `kvoctl ARGUMENTS --socket …` left running (an observer).
    static func background(_ kvod: KVODProcess, _ arguments: [String]) throws -> RunningCommand {
        try RunningCommand(KVOCtl.binaryURL, arguments + ["--socket", kvod.socketPath])
    }

    /// The running children of `pid` (a shell's current command).
    static func children(of pid: Int32) -> [Int32] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func events(_ command: RunningCommand) -> [JSONObject] {
        command.linesSoFar.compactMap { line in
            if case .object(let members)? = try? JSONReader.parse(line) { members } else { nil }
        }
    }

    static func waitForObservations(_ connection: KVOConnection, _ count: Int) async throws {
        try await waitUntil("kvod holds \(count) observations", timeout: 60) {
            try await connection.info().observations == count
        }
    }

    @Test func leaderElectionOneHostWinsTheOtherTakesOverWhenTheLeaderIsKilled() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        let observer = try Self.background(kvod, ["observe", "election/web", "leader", "--new"])
        try await Self.waitForObservations(connection, 1)
        let campaign = try Self.recipe("Leader election")

        let hostA = try Self.shell(kvod, campaign, environment: ["HOST": "host-a"])
        try await waitUntil("host-a leads", timeout: 30) { () async -> Bool in
            (try? await connection.get("election/web", "leader")) == "host-a"
        }
        // The one-line form, as written, on another host: the seat is taken.
        let oneLine = try await Self.shell(kvod, try Self.recipe("Leader election", block: 1)).wait()
        #expect(oneLine.status == 5 && oneLine.stderr.contains("precondition_failed"), "\(oneLine)")

        // host-b waits in `observe --since` (its own observation, beside the observer's and host-a's hold).
        let hostB = try Self.shell(kvod, campaign, environment: ["HOST": "host-b"])
        try await Self.waitForObservations(connection, 3)
        #expect(try await connection.get("election/web", "leader") == "host-a")

        let leader = try #require(Self.children(of: hostA.processIdentifier).first, "host-a's kvoctl")
        kill(leader, SIGKILL)
        try await waitUntil("host-b leads", timeout: 30) { () async -> Bool in
            (try? await connection.get("election/web", "leader")) == "host-b"
        }
        // The observer's kvoctl prints host-b's event in its own time, maybe after the get's reply came.
        try await waitUntil("the observer saw host-b", timeout: 10) { () async -> Bool in
            Self.events(observer).count >= 3
        }
        let seen = Self.events(observer).map { [$0["new"], $0["cause"]] }
        #expect(seen == [["host-a", nil], [.null, "disconnect"], ["host-b", nil]], "\(observer.linesSoFar)")
        #expect(try await hostA.wait().status == 1, "a candidate whose kvoctl was killed gives up")

        // SIGTERM to the leader's kvoctl: it exits 0, so does the loop, and the seat is free.
        let heldBy = try #require(Self.children(of: hostB.processIdentifier).first, "host-b's kvoctl")
        kill(heldBy, SIGTERM)
        let ended = try await hostB.wait()
        #expect(ended.status == 0, "\(ended)")
        try await waitUntil("the observer sees host-b go", timeout: 10) { () async -> Bool in
            Self.events(observer).count == 4
        }
        #expect(Self.events(observer).last?["cause"] == "disconnect")
        let gone = try await KVOCtl.run(kvod, ["get", "election/web", "leader"])
        #expect(gone.status == 8 && gone.stderr.contains("not_found"), "\(gone)")
    }

    /// 8 processes run the recipe's loop at once; every increment counts. (The recipe's 1,000
    /// increments per process are `INCREMENTS` here, smaller: each is a kvoctl process, tens of ms
    /// in a debug build. kvodTests' AddDaemonTests runs 8 × 500 adds with real clients.)
    @Test func counterRecipeRunBy8ProcessesAtOnceLosesNoIncrement() async throws {
        let kvod = try await KVODProcess()
        let recipe = try Self.recipe("A counter without lost updates", block: 1)
        // A fifth under a sanitizer (scripts/ci/sanitizers.sh), where every kvoctl process is slower still.
        let increments = ProcessInfo.processInfo.environment["KVOD_TEST_SANITIZER"] == nil ? 15 : 3
        let runners = try (0..<8).map { _ in
            try Self.shell(kvod, recipe, environment: ["INCREMENTS": String(increments)])
        }
        for runner in runners {
            let run = try await runner.wait(timeout: 240)
            // An add has no race to lose: no precondition_failed line, nor any other, on standard error.
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
        }
        let counter = try await KVOCtl.run(kvod, ["get", "counters/jobs", "n"])
        #expect(counter.stdout == "\(8 * increments)\n", "\(counter)")
    }

    @Test func leaseRecipeValueGoesWithCauseTtlWithin4SecondsOfTheLastRenewal() async throws {
        let kvod = try await KVODProcess()
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        let observer = try Self.background(kvod, ["observe", "workers/w1", "alive", "--new"])
        try await Self.waitForObservations(connection, 1)
        let heartbeat = try Self.shell(kvod, try Self.recipe("A lease"))
        try await waitUntil("three renewals", timeout: 30) { () async -> Bool in Self.events(observer).count >= 3 }
        // Waited for, not read once: on a loaded machine a renewal (a kvoctl started each
        // second) can come after the 3 s, and the value is then gone until the next one.
        try await waitUntil("the value is there with 1 to 3 s left", timeout: 10) { () async -> Bool in
            let lease = try? await connection.getVersioned("workers/w1", "alive")
            return lease?.expiresIn.map { (1...3).contains($0) } == true
        }

        heartbeat.send(SIGKILL)
        try await Self.checkLeaseExpires(observer)
    }

    /// Once the renewals stop, `observer` (of the lease recipe's value) gets its deletion with
    /// `cause: ttl` at its deadline: 2 to 4.5 s after it saw the last renewal.
    static func checkLeaseExpires(_ observer: RunningCommand) async throws {
        var lastRenewal = ContinuousClock.now
        var renewals = Self.events(observer).count
        try await waitUntil("the lease expires", timeout: 15) { () async -> Bool in
            let events = Self.events(observer)
            if events.last?["cause"] == "ttl" { return true }
            if events.count != renewals { (renewals, lastRenewal) = (events.count, .now) }
            return false
        }
        let expiredAfter = ContinuousClock.now - lastRenewal
        #expect(expiredAfter <= .milliseconds(4_500), "at most 4 s after the last renewal (\(expiredAfter))")
        // The test sees the last renewal when it reads it, later than kvod made it: on a loaded
        // machine (`swift test --parallel`) by up to a second. Not deleted long before its 3 s.
        #expect(expiredAfter >= .milliseconds(2_000), "not before its deadline (\(expiredAfter))")
        #expect(Self.events(observer).last?["new"] == .null)
    }

    @Test func batchRecipeEventsComeTogetherAndAFailedConditionChangesNothing() async throws {
        let kvod = try await KVODProcess()
        let move = try await Self.moveJob(through: kvod, observedOn: kvod)
        #expect(move.told == [["queue/pending", "job7", .null], ["queue/running", "job7", ["cmd": "backup"]]], "\(move)")
        #expect(move.seqs.count == 2 && move.seqs[0] + 1 == move.seqs[1], "consecutive seqs: \(move.seqs)")
        #expect(move.statuses == [0, 5] && move.refusal.contains("ops[0]"), "\(move)")
    }
}
