import KVOTestSupport
import Testing

extension EtcdCluster {
    /// What etcd holds of `object` under `/kvod/`, read with etcdctl: the
    /// record of its last change, inside its document key's value (the
    /// value's first line) or, once the object is deleted, beside it
    /// (docs/CLUSTER.md); and its document (nil once it is deleted).
    func stored(_ object: String) async throws -> (record: String, document: String?) {
        let value = try await etcdctl(["get", "/kvod/o/\(object)", "--print-value-only"])
        if value.count == 2 { return (value[0], value[1]) }
        let beside = try await etcdctl(["get", "/kvod/c/\(object)", "--print-value-only"])
        return (beside.first ?? "", value.first)
    }

    private func etcdctl(_ arguments: [String]) async throws -> [String] {
        let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, ["--endpoints", clientURLs[0]] + arguments,
                                           environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(run.status == 0, "\(run.stderr)")
        return run.lines.filter { !$0.isEmpty }
    }
}
