import Foundation
import KVOTestSupport

/// The faults of a history round, one after another while the clients run
/// (issue 35 item 7): SIGKILL of etcd's leader and its restart, SIGSTOP and
/// SIGCONT of a member, `Txn`s whose answer (or request) the proxy loses,
/// SIGKILL of a kvod and its restart, and the link of the kvod in a network
/// namespace cut and restored (where one can be made). Each lasts until what
/// it does is seen (a member stopped is noticed by its kvod, the clients made
/// `operations` writes meanwhile), never a set time; after each, every kvod
/// follows etcd again before the next.
final class ClusterFaults: @unchecked Sendable {
    // @unchecked: only the run that owns it touches it, from one task at a time.
    /// One fault injected: what, and when it began and ended (monotonic seconds).
    struct Record: Sendable {
        let name: String
        let start: Double
        let end: Double
    }

    let rig: ClusterHistoryRig
    let log: HistoryLog
    /// How many writes the clients make during each fault, and between faults.
    let operations: Int
    private(set) var records: [Record] = []

    init(rig: ClusterHistoryRig, log: HistoryLog, operations: Int) {
        self.rig = rig
        self.log = log
        self.operations = operations
    }

    /// Round `round`'s faults: which member stops and which kvod dies turn with the round.
    func inject(round: Int) async throws {
        try await letClientsWork()
        try await fault("SIGKILL of etcd's leader, and its restart") { try await killLeader() }
        try await fault("a lost Txn answer (twice, once with the watch held back 1.5 s) and a lost Txn request") {
            try await loseTxns()
        }
        let watcher = (round + 1) % 3
        let member = try rig.currentMember(of: watcher)
        try await fault("SIGSTOP of etcd member \(member) (kvod \(watcher)'s), then SIGCONT") {
            try await pause(member: member, usedBy: watcher)
        }
        let kvod = round % 3
        try await fault("SIGKILL of kvod \(kvod), and its restart") { try await rig.killAndRestart(kvod: kvod) }
        if let host = rig.host {
            try await fault("kvod 1's link cut, then restored") { try await cut(host) }
        }
    }

    private func fault(_ name: String, _ body: () async throws -> Void) async throws {
        let start = MonotonicClock.now()
        try await body()
        records.append(Record(name: name, start: start, end: MonotonicClock.now()))
        try await waitUntil("every kvod follows etcd after: \(name)", timeout: 90, recheckEvery: 0.05) { () async -> Bool in
            rig.sockets.allSatisfy(ClusterHistoryRig.follows)
        }
        try await letClientsWork()
    }

    /// Lets the clients make ``operations`` more writes (answered or not): a condition to wait on, not a pause.
    func letClientsWork(_ count: Int? = nil) async throws {
        let target = log.writeCount + (count ?? operations)
        try await waitUntil("the clients made \(count ?? operations) more writes (have \(log.writeCount))", timeout: 120,
                            recheckEvery: 0.02) { () async -> Bool in
            log.writeCount >= target || log.isStopping
        }
    }

    private func killLeader() async throws {
        let cluster = rig.cluster
        let leader = try await cluster.leaderIndex()
        try await cluster.kill(member: leader)
        try await cluster.waitUntilHealthy(cluster.clientURLs.enumerated().filter { $0.offset != leader }.map(\.element))
        try await letClientsWork()
        try await cluster.restart(member: leader)
    }

    private func loseTxns() async throws {
        let proxy = rig.proxy
        let lost = proxy.droppedAnswers
        proxy.arm(txns: 1, losing: .answer)
        proxy.arm(txns: 1, losing: .answer, watchHold: 1.5)
        proxy.arm(txns: 1, losing: .request)
        try await waitUntil("the proxy lost three Txns' answers or requests", timeout: 90, recheckEvery: 0.02) { () async -> Bool in
            proxy.droppedAnswers >= lost + 3
        }
    }

    /// Stops `member` until `kvod`, which talks to it, says it is stale or has moved to another member.
    private func pause(member: Int, usedBy kvod: Int) async throws {
        let socket = rig.sockets[kvod]
        rig.cluster.pause(member: member)
        defer { rig.cluster.resume(member: member) }
        try await waitUntil("kvod \(kvod) notices that etcd member \(member) stopped", timeout: 30, recheckEvery: 0.05) {
            () async -> Bool in
            (try? ClusterHistoryRig.clusterInfo(socket))?["stale"] == true || (try? rig.currentMember(of: kvod)) != member
        }
        try await letClientsWork()
    }

    private func cut(_ host: NetworkNamespace) async throws {
        let socket = rig.sockets[1]
        try host.cut()
        defer { try? host.restore() }
        try await waitUntil("kvod 1 says it is stale", timeout: 30, recheckEvery: 0.05) { () async -> Bool in
            (try? ClusterHistoryRig.clusterInfo(socket))?["stale"] == true
        }
        try await letClientsWork()
    }
}
