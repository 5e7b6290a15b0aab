import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues

/// What the history run runs on: a 3-member etcd cluster and three kvods,
/// one per "host". kvod 0 is given every member, its own first; kvod 1 runs
/// in a network namespace of its own when one can be made (``NetworkNamespace``,
/// a link the run cuts), else beside the others, every member given; kvod 2
/// talks to member 2 only, through a ``LossyProxy`` that loses the answer to
/// (or the request of) a `Txn` when armed.
final class ClusterHistoryRig: @unchecked Sendable {
    // @unchecked: only the run that owns it touches it, from one task at a time.
    let cluster: EtcdCluster
    let proxy: LossyProxy
    let host: NetworkNamespace?
    private(set) var kvods: [KVODProcess] = []
    /// kvods killed and started again on the same socket: kept until the end,
    /// since their folder holds the socket path.
    private var killed: [KVODProcess] = []
    private let arguments: [[String]]
    private let launchers: [[String]]

    init(lifetime: Double) async throws {
        let host = NetworkNamespace.canBeMade ? try NetworkNamespace() : nil
        let cluster = try await EtcdCluster(clientHosts: host.map { [$0.rootAddress] } ?? [])
        let proxy = try LossyProxy(forwardingTo: cluster.clientURLs[2], lifetime: lifetime)
        (self.host, self.cluster, self.proxy) = (host, cluster, proxy)
        let urls = cluster.clientURLs
        let hostURLs = host.map { host in (0..<3).map { cluster.clientURL(of: $0, on: host.rootAddress) } } ?? urls
        arguments = [
            ["--etcd", urls.joined(separator: ",")],
            ["--etcd", [hostURLs[1], hostURLs[2], hostURLs[0]].joined(separator: ",")],
            ["--etcd", proxy.url],
        ]
        launchers = [[], host?.exec ?? [], []]
        for index in 0..<3 {
            kvods.append(try await KVODProcess(arguments: arguments[index], launcher: launchers[index]))
        }
    }

    var sockets: [String] { kvods.map(\.socketPath) }

    /// The member kvod `index` talks to now (its `info`'s endpoint: the proxy's is member 2's).
    func currentMember(of index: Int) throws -> Int {
        let endpoint = try Self.clusterInfo(kvods[index].socketPath)["endpoint"]?.stringValue ?? ""
        if endpoint == proxy.url { return 2 }
        let port = URL(string: endpoint)?.port
        guard let member = cluster.members.firstIndex(where: { URL(string: $0.clientURL)?.port == port }) else {
            throw TestFailure("kvod \(index) talks to \(endpoint), no member of the cluster")
        }
        return member
    }

    /// Kills kvod `index` with SIGKILL and starts it again on its socket.
    func killAndRestart(kvod index: Int) async throws {
        try await kvods[index].kill()
        killed.append(kvods[index])
        kvods[index] = try await KVODProcess(arguments: arguments[index], socketPath: kvods[index].socketPath,
                                             launcher: launchers[index])
    }

    /// What each kvod (each of its runs) logged of its dealings with etcd: to read beside a violation.
    func etcdLog() -> String {
        let marks = ["following etcd", "history from revision", "Txn", "over etcd", "epoch"]
        return (killed + kvods).map { kvod in
            let lines = kvod.stderrText().split(separator: "\n").filter { line in marks.contains { line.contains($0) } }
            return "kvod at \(kvod.socketPath) (pid \(kvod.pid)):\n  " + lines.suffix(60).joined(separator: "\n  ")
        }.joined(separator: "\n")
    }

    /// Ends the kvods (the one in the namespace first: it keeps the namespace alive), the proxy and the namespace.
    func close() {
        for kvod in kvods + killed { ChildExit.kill(kvod.process) }
        proxy.close()
        host?.remove()
    }

    /// kvod `index`'s `info`'s `cluster`, asked on a connection of its own.
    static func clusterInfo(_ socket: String) throws -> JSONValue {
        let client = try LineClient(path: socket)
        return try client.request(#"{"op":"info"}"#, timeout: 30).reply["cluster"] ?? .null
    }

    /// Whether the kvod at `socket` follows etcd (its `info` says not stale).
    static func follows(_ socket: String) -> Bool {
        (try? clusterInfo(socket))?["stale"] == false
    }
}
