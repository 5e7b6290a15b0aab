import Foundation

extension EtcdCluster {
    /// The index of the member that leads now, as the members say (`etcdctl
    /// endpoint status`: its IS LEADER column); waits for one to say so.
    public func leaderIndex(timeout: Double = 30) async throws -> Int {
        var leader: Int?
        try await waitUntil("an etcd member says it leads", timeout: timeout, recheckEvery: 0.1) { () async throws -> Bool in
            let running = members.indices.filter { ChildExit.status(of: members[$0].process) == nil }
            let run = try await CommandRun.run(Self.binaries!.etcdctl, [
                "--endpoints", running.map { members[$0].clientURL }.joined(separator: ","), "--command-timeout", "2s",
                "endpoint", "status", "--write-out", "simple",
            ], environment: ["ETCDCTL_API": "3"], timeout: 10)
            // Each line: endpoint, ID, version, DB size, is leader, is learner, raft term, …
            for line in run.stdout.split(separator: "\n") {
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if fields.count > 4, fields[4] == "true" {
                    leader = members.firstIndex { $0.clientURL == fields[0] }
                }
            }
            return leader != nil
        }
        return leader!
    }
}
