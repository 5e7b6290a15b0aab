import KVOProtocol
#if canImport(Glibc)
import Glibc
#endif

/// What `kvod-bench cluster` compares: kvod over etcd, etcd itself through
/// its JSON gateway, and kvod in local mode (the fan-out's reference).
enum ClusterPeer: String, CaseIterable, Sendable {
    case kvodOverEtcd = "kvod-over-etcd"
    case etcd
    case kvodLocal = "kvod-local"

    var displayName: String {
        switch self {
        case .kvodOverEtcd: "kvod over etcd"
        case .etcd: "etcd alone (JSON gateway)"
        case .kvodLocal: "kvod, local mode"
        }
    }
}

/// The servers of one measurement, started for it and stopped after it: a
/// fresh 3-member etcd cluster and a kvod per host over it (kvod over etcd),
/// the cluster alone (etcd: a host is a member), or one local-mode kvod (every
/// host is that kvod). Clients connect to a host by its number.
final class ClusterRig {
    let peer: ClusterPeer
    let hosts: Int
    private let etcd: EtcdServers?
    private let kvods: [ServerProcess]

    struct Binaries: Sendable {
        var kvod: String
        var etcd: String
    }

    /// The prefix kvod keeps its keys under in etcd.
    static let kvodPrefix = "/kvod/"

    init(_ peer: ClusterPeer, hosts: Int, members: Int, binaries: Binaries) throws {
        self.peer = peer
        self.hosts = hosts
        let kvodBinaries = ServerProcess.Binaries(kvod: binaries.kvod, redisServer: "")
        switch peer {
        case .kvodOverEtcd:
            let etcd = try EtcdServers(members: members, binary: binaries.etcd)
            self.etcd = etcd
            // Each kvod is pointed at its own member, as docs/CLUSTER.md deploys them.
            kvods = try (0..<hosts).map { host in
                try ServerProcess(.kvod, binaries: kvodBinaries, arguments: [
                    "--etcd", etcd.clientURLs[host % members], "--etcd-prefix", Self.kvodPrefix,
                ])
            }
            for kvod in kvods { try Self.waitUntilFollowing(kvod) }
        case .etcd:
            etcd = try EtcdServers(members: members, binary: binaries.etcd)
            kvods = []
        case .kvodLocal:
            etcd = nil
            kvods = [try ServerProcess(.kvod, binaries: kvodBinaries)]
        }
    }

    /// Until `kvod` follows etcd (a `get` no longer says `stale`), at most 20 s, so
    /// that no measurement starts on a kvod that refuses changes (`unavailable`;
    /// kvods before 758e590 did, between their socket's listening and their first watch).
    private static func waitUntilFollowing(_ kvod: ServerProcess) throws(BenchError) {
        let fd = try UnixSocket.connect(kvod.socketPath)
        defer { close(fd) }
        let request = RequestEncoder(op: .get, object: "kvod-bench/following", keyPath: nil).line
        let deadline = monotonicNanoseconds() + 20_000_000_000
        var reply: [UInt8] = []
        while monotonicNanoseconds() < deadline {
            try UnixSocket.exchange(fd, request, into: &reply) { sending, _, code in
                sending ? "kvod \(kvod.socketPath): \(UnixSocket.errorText(code))" : "kvod \(kvod.socketPath) closed the connection"
            }
            if !String(decoding: reply, as: UTF8.self).contains(#""stale":true"#) { return }
            usleep(10_000)
        }
        throw BenchError("kvod \(kvod.socketPath) did not follow etcd within 20 s")
    }

    /// How the clients of this measurement speak.
    var wire: Wire { Wire(peer: peer == .etcd ? .etcd : .kvod, flavour: .pubSub) }

    /// A new client connection to `host`.
    func connect(host: Int) throws(BenchError) -> Connection {
        if let etcd, kvods.isEmpty {
            return try Connection(port: etcd.clientPorts[host % etcd.clientPorts.count], wire: wire)
        }
        return try Connection(path: kvods[host % kvods.count].socketPath, wire: wire)
    }

    /// Registers `requests` on `connections` (an observe per key, or one etcd watch).
    func register(_ connections: [Connection], keys: [BenchKey]) throws(BenchError) {
        let wire = self.wire
        if peer == .etcd {
            let keysPrefix = Wire.etcdPrefix + (keys.count == 1 ? keys[0].redisKey : commonObjectPrefix(keys))
            let request = keys.count == 1 ? wire.observeRequest(keys[0]) : Wire.etcdWatchPrefixRequest(keysPrefix)
            _ = try Registration.run(connections, requests: { _ in request }, count: { _ in 1 })
        } else {
            let requests = keys.flatMap(wire.observeRequest)
            _ = try Registration.run(connections, requests: { _ in requests }, count: { _ in keys.count })
        }
    }

    /// `set/` for `set/0`, `set/1`, …: the objects' common part up to their last `/`.
    private func commonObjectPrefix(_ keys: [BenchKey]) -> String {
        let object = keys[0].object
        return String(object[...(object.lastIndex(of: "/") ?? object.startIndex)])
    }

    /// The etcd cluster's revision now; nil in local mode.
    func etcdRevision() -> Int? { etcd?.revision() }

    /// The CPU time the kvods and the etcd members have used so far.
    func cpuSeconds() -> (kvods: Double, etcd: Double) {
        (kvods.reduce(0) { $0 + ProcessCPU.seconds($1.pid) }, etcd?.cpuSeconds() ?? 0)
    }

    func stop() {
        for kvod in kvods { kvod.stop() }
        etcd?.stop()
    }

    deinit { stop() }
}
