import Foundation
import KVOClient
import KVOTestSupport
import KVOValues
import Testing

/// docs/RECIPES.md over etcd (docs/CLUSTER.md): each recipe's shell block, run by `sh` as
/// written (RecipeTests' helpers), with its participants spread over two kvods on one etcd member.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterRecipeTests {
    /// Both kvods' `--etcd-lease-ttl`: a killed kvod's ephemeral values must go within it; a
    /// closed connection's at once (its lease is revoked), well within it.
    static let leaseTTL = 6.0

    /// Two kvods on `cluster`'s member, both started before any write (so that both take every
    /// modSeq from etcd's revisions; a kvod follows etcd from its start, docs/CLUSTER.md).
    static func twoKvods(_ cluster: EtcdCluster) async throws -> [KVODProcess] {
        var kvods: [KVODProcess] = []
        for _ in 0..<2 {
            kvods.append(try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0],
                                                           "--etcd-lease-ttl", String(Int(leaseTTL))]))
        }
        return kvods
    }

    /// Waits until the candidate on `kvod` waits in `observe --since`, beside `others` observations of the test's.
    static func waitForCandidate(on kvod: KVODProcess, beside others: Int) async throws {
        try await RecipeTests.waitForObservations(try KVOConnection(socketPath: kvod.socketPath), others + 1)
    }

    @Test func leaderElectionTwoCandidatesOnTwoKvodsOneWinsTheOtherTakesOverWhenTheLeaderGoes() async throws {
        try await Started.run(Self.electLeaders)
    }

    private static func electLeaders(_ started: Started) async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvods = try await twoKvods(cluster)
        let campaign = try RecipeTests.recipe("Leader election")
        let observer = try started.add(RecipeTests.background(kvods[1], ["observe", "election/web", "leader", "--new"]))
        let onB = try KVOConnection(socketPath: kvods[1].socketPath)
        try await RecipeTests.waitForObservations(onB, 1)
        let observersOn = [0, 1]  // the test's own observations on kvods[0], kvods[1]

        // Both candidates start at once, each on its own kvod.
        let hosts = ["host-a", "host-b"]
        let candidates = try (0..<2).map {
            try started.add(RecipeTests.shell(kvods[$0], campaign, environment: ["HOST": hosts[$0]]))
        }
        var winner = -1
        try await waitUntil("someone leads", timeout: 30) { () async -> Bool in
            let seat = try? await onB.get("election/web", "leader")
            winner = hosts.firstIndex { seat == .string($0) } ?? -1
            return winner >= 0
        }
        let loser = 1 - winner
        // The loser waits in `observe --since` on its kvod; the seat stayed the winner's: one event only.
        try await waitForCandidate(on: kvods[loser], beside: observersOn[loser])
        #expect(candidates[loser].isRunning)
        #expect(try await onB.get("election/web", "leader") == .string(hosts[winner]))
        #expect(RecipeTests.events(observer).map { $0["new"] } == [.string(hosts[winner])], "\(observer.linesSoFar)")
        // The one-line form, on either kvod: the seat is taken.
        for kvod in kvods {
            let oneLine = try await RecipeTests.shell(kvod, try RecipeTests.recipe("Leader election", block: 1)).wait()
            #expect(oneLine.status == 5 && oneLine.stderr.contains("precondition_failed"), "\(oneLine)")
        }

        // The winner's kvoctl dies: its connection closes, its kvod revokes the seat's lease, the loser takes over.
        let leader = try #require(RecipeTests.children(of: candidates[winner].processIdentifier).first, "the leader's kvoctl")
        let closedAt = ContinuousClock.now
        kill(leader, SIGKILL)
        try await waitUntil("the other candidate leads", timeout: 30) { () async -> Bool in
            (try? await onB.get("election/web", "leader")) == .string(hosts[loser])
        }
        let takeover = ContinuousClock.now - closedAt
        // kvod renews a lease every third of its ttl, so an expiry comes at
        // least two thirds of it after the close: sooner is the revoke.
        #expect(takeover < .seconds(leaseTTL * 2 / 3), "took over \(takeover) after the close, lease ttl \(leaseTTL) s")
        try await waitUntil("the observer saw the takeover", timeout: 10) { () async -> Bool in
            RecipeTests.events(observer).count >= 3
        }
        let seen = RecipeTests.events(observer).map { [$0["new"], $0["cause"]] }
        #expect(seen == [[.string(hosts[winner]), nil], [.null, "disconnect"], [.string(hosts[loser]), nil]],
                "\(observer.linesSoFar)")
        #expect(try await candidates[winner].wait().status == 1, "a candidate whose kvoctl was killed gives up")

        // A new candidate on the other kvod; then the leader's whole kvod is SIGKILLed: no revoke,
        // the seat goes when its lease expires, and the candidate takes over within the lease ttl.
        let survivor = kvods[winner]
        let onSurvivor = try KVOConnection(socketPath: survivor.socketPath)
        let next = try started.add(RecipeTests.shell(survivor, campaign, environment: ["HOST": "host-c"]))
        try await waitForCandidate(on: survivor, beside: observersOn[winner])
        #expect(try await onSurvivor.get("election/web", "leader") == .string(hosts[loser]))
        let killedAt = ContinuousClock.now
        try await kvods[loser].kill()
        try await waitUntil("host-c leads", timeout: 30) { () async -> Bool in
            (try? await onSurvivor.get("election/web", "leader")) == "host-c"
        }
        let afterKill = ContinuousClock.now - killedAt
        // The lease's ttl, etcd's 500 ms expiry check, and the candidate's
        // shell loop starting kvoctl again (seconds of it at a load of 20).
        #expect(afterKill < .seconds(2 * leaseTTL + 2), "took over \(afterKill) after the kill, lease ttl \(leaseTTL) s")
        #expect(next.isRunning, "host-c holds the seat")
    }

    /// The commands a test started, ended by ``stop()`` whether the test passed or threw, their
    /// children first: a shell's child would keep its output open (and RunningCommand's deinit
    /// waits for a shell killed so in vain), and a candidate's loop goes on after its
    /// kvod is SIGKILLed.
    final class Started {
        private var commands: [RunningCommand] = []

        func add(_ command: RunningCommand) -> RunningCommand {
            commands.append(command)
            return command
        }

        /// Runs `body` with a new `Started`, and stops what it started however it ends.
        static func run(_ body: (Started) async throws -> Void) async throws {
            let started = Started()
            do { try await body(started) } catch {
                try? await started.stop()
                throw error
            }
            try await started.stop()
        }

        func stop() async throws {
            for command in commands where command.isRunning {
                for child in RecipeTests.children(of: command.processIdentifier) { kill(child, SIGKILL) }
                command.send(SIGKILL)
                _ = try await command.wait()
            }
        }
    }

    /// 2 processes on each kvod run the recipe at once; every increment counts, on both kvods.
    @Test func counterRecipeRunOnTwoKvodsAtOnceLosesNoIncrement() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvods = try await Self.twoKvods(cluster)
        let recipe = try RecipeTests.recipe("A counter without lost updates")
        let increments = ProcessInfo.processInfo.environment["KVOD_TEST_SANITIZER"] == nil ? 10 : 3
        let runners = try (0..<4).map { index in
            try RecipeTests.shell(kvods[index % 2], recipe, environment: ["INCREMENTS": String(increments)])
        }
        for runner in runners {
            let run = try await runner.wait(timeout: 240)
            #expect(run.status == 0, "\(run)")
        }
        for kvod in kvods {
            let connection = try KVOConnection(socketPath: kvod.socketPath)
            try await waitUntil("the kvod at \(kvod.socketPath) has every increment", timeout: 10) { () async -> Bool in
                (try? await connection.get("counters/jobs", "n")) == .number(JSONNumber(4 * increments))
            }
        }
    }

    /// The worker renews through one kvod, observed on the other; then the worker's kvod is
    /// SIGKILLed (its host is gone): the value still goes at its deadline, with `cause: ttl`.
    @Test func leaseRecipeValueGoesWithCauseTtlForAnotherKvodsObserverWhenTheWorkersKvodIsKilled() async throws {
        try await Started.run(Self.renewLease)
    }

    private static func renewLease(_ started: Started) async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvods = try await twoKvods(cluster)
        let onB = try KVOConnection(socketPath: kvods[1].socketPath)
        let observer = try started.add(RecipeTests.background(kvods[1], ["observe", "workers/w1", "alive", "--new"]))
        try await RecipeTests.waitForObservations(onB, 1)
        let heartbeat = try started.add(RecipeTests.shell(kvods[0], try RecipeTests.recipe("A lease")))
        try await waitUntil("three renewals", timeout: 30) { () async -> Bool in RecipeTests.events(observer).count >= 3 }
        // B tells the value's remaining time, as the recipe says: the 3 s of the last renewal's lease.
        // Waited for, not read once: a late renewal on a loaded machine lets the value lapse until the next.
        try await waitUntil("the value is there on the other kvod with 1 to 3 s left", timeout: 10) { () async -> Bool in
            guard let alive = try? await onB.getVersioned("workers/w1", "alive") else { return false }
            return alive.value == true && (1...3).contains(alive.expiresIn ?? -1)
        }

        try await kvods[0].kill()
        try await RecipeTests.checkLeaseExpires(observer)
        #expect(try await heartbeat.wait().status == 1, "the worker's next renewal fails: its kvod is gone")
    }

    /// The queue move through one kvod, observed on the other while a writer on it writes on:
    /// what kvoctl says and what the observer is told are what one local kvod says and tells.
    @Test func batchRecipeAcrossTwoKvodsTellsWhatLocalModeTells() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvods = try await Self.twoKvods(cluster)
        let overEtcd = try await RecipeTests.moveJob(through: kvods[1], observedOn: kvods[0])
        let local = try await KVODProcess()
        let inLocalMode = try await RecipeTests.moveJob(through: local, observedOn: local)
        #expect(overEtcd.told == inLocalMode.told && overEtcd.told.count == 2, "\(overEtcd) / \(inLocalMode)")
        #expect(overEtcd.statuses == [0, 5] && overEtcd.statuses == inLocalMode.statuses)
        #expect(overEtcd.refusal == inLocalMode.refusal && overEtcd.refusal.contains("ops[0]"), "\(overEtcd.refusal)")
        // One Txn, one revision: both events carry it (locally, two consecutive seqs).
        #expect(overEtcd.seqs.count == 2 && overEtcd.seqs[0] == overEtcd.seqs[1], "\(overEtcd.seqs)")
        #expect(inLocalMode.seqs.count == 2 && inLocalMode.seqs[0] + 1 == inLocalMode.seqs[1], "\(inLocalMode.seqs)")
    }
}
