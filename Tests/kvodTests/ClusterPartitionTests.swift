import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// A kvod cut off etcd by a real network failure (issue 18, docs/CLUSTER.md):
/// host C's kvod runs in a network namespace of its own and reaches the etcd
/// cluster over a veth pair, whose link the test cuts and restores; host A's
/// kvod runs in the root namespace. Nothing tells C's TCP connections that the
/// link is gone (no reset, no FIN): kvod must find out by itself.
///
/// Skipped where network namespaces cannot be made (not root, or no `ip`):
/// CI and the developers' machines are root and have iproute2
/// (scripts/install-deps.sh), so there it runs.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .enabled(if: NetworkNamespace.canBeMade, "network namespaces cannot be made here (needs root and iproute2's ip)"),
       .serialized)
struct ClusterPartitionTests {
    @Test func aKvodWhoseLinkIsCutRefusesChangesReadsStaleAndItsObserversCatchUpGapFreeOnceTheLinkIsBack() async throws {
        let host = try NetworkNamespace()
        defer { host.remove() }
        let cluster = try await EtcdCluster(clientHosts: [host.rootAddress])
        try Self.onHosts(host, cluster)
    }

    /// Host A's kvod on member 0 over loopback, host C's in `host` on member 2 over the veth.
    private static func onHosts(_ host: NetworkNamespace, _ cluster: EtcdCluster) throws {
        let a = try KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let memberURL = cluster.clientURL(of: 2, on: host.rootAddress)
        let c = try KVODProcess(arguments: ["--etcd", memberURL], launcher: host.exec)
        // Gone before the namespace is removed, which a process still in it would keep.
        defer { ChildExit.kill(c.process) }
        try cutAndRestore(host, a: a.socketPath, c: c.socketPath, memberURL: memberURL)
    }

    /// Observers on A and C, a writer on A; C's link cut while A writes, then restored.
    private static func cutAndRestore(_ host: NetworkNamespace, a: String, c: String, memberURL: String) throws {
        let observerA = try observer(on: a), observerC = try observer(on: c)
        let writerA = try LineClient(path: a), clientC = try LineClient(path: c)
        var expected = try write(0..<4, through: writerA)
        let heardA = try read(expected.count, from: observerA), heardC = try read(expected.count, from: observerC)
        #expect(heardC == heardA, "before the cut, C's observer hears what A's does")
        #expect(try clientC.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == nil)

        try host.cut()
        // Written while C still takes its silent watch for alive.
        expected += try write(4..<8, through: writerA)
        try waitUntil("C's reads are stale", timeout: 20, recheckEvery: 0.02) {
            try clientC.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == true
        }
        try checkCutOff(clientC, c, memberURL: memberURL)
        expected += try write(8..<12, through: writerA)

        try host.restore()
        let streamA = heardA + (try read(expected.count - heardA.count, from: observerA))
        let streamC = heardC + (try read(expected.count - heardC.count, from: observerC, timeout: 30))
        #expect(streamA.map(\.seq) == expected, "A's observer hears every change A acknowledged, in order")
        #expect(streamC == streamA, "C's observer hears the same stream: none missed, none repeated")
        try waitUntil("C's reads are no longer stale", timeout: 20, recheckEvery: 0.02) {
            try clientC.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["stale"] == nil
        }
        let back = try ClusterDaemonTests.info(c)["cluster"]
        #expect(back?["leader"] == true && back?["stale"] == false && back?["lag"] == 0
                    && back?["appliedRevision"]?.intValue == expected.last, "\(back ?? .null)")
        // C writes again, and each observer's next event is that write: nothing came twice before it.
        let reply = try clientC.request(#"{"op":"set","object":"o","keyPath":"k","value":"from C"}"#, timeout: 30).reply
        #expect(reply["ok"] == true, "\(reply)")
        for observer in [observerA, observerC] {
            let next = try read(1, from: observer)
            #expect(next.first?.seq == reply["seq"]?.intValue && next.first?.new == "from C", "\(next)")
        }
    }

    /// Cut off: C refuses a change with `unavailable` naming its member, its
    /// `get` and `list` say stale, its `info` says why.
    private static func checkCutOff(_ client: LineClient, _ c: String, memberURL: String) throws {
        let refused = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":-1}"#).reply
        #expect(refused["error"]?["code"] == "unavailable", "\(refused)")
        #expect(refused["error"]?["message"]?.stringValue?.contains(memberURL) == true, "\(refused)")
        let listed = try client.request(#"{"op":"list","prefix":""}"#).reply
        #expect(listed["stale"] == true && listed["objects"] == ["o"], "\(listed)")
        let cluster = try ClusterDaemonTests.info(c)["cluster"]
        #expect(cluster?["leader"] == false && cluster?["stale"] == true, "\(cluster ?? .null)")
        #expect(cluster?["error"]?.stringValue?.contains(memberURL) == true, "\(cluster ?? .null)")
    }

    /// One event as the tests compare them.
    struct Heard: Equatable {
        var seq: Int?, keyPath: String?, kind: String?, indexes: JSONValue?, new: JSONValue?
    }

    private static func observer(on socket: String) throws -> LineClient {
        let client = try LineClient(path: socket)
        let reply = try client.request(#"{"op":"observe","object":"o","keyPaths":["k","list"],"options":["new"]}"#).reply
        #expect(reply["ok"] == true, "\(reply)")
        return client
    }

    /// A set of `k` or an insert into `list` for each number; returns the seqs acknowledged.
    private static func write(_ numbers: Range<Int>, through writer: LineClient) throws -> [Int] {
        try numbers.map { n in
            let line = n % 2 == 0 ? #"{"op":"set","object":"o","keyPath":"k","value":\#(n)}"#
                : #"{"op":"insert","object":"o","keyPath":"list","values":[\#(n)]}"#
            let reply = try writer.request(line, timeout: 30).reply
            #expect(reply["ok"] == true, "\(line): \(reply)")
            return reply["seq"]?.intValue ?? -1
        }
    }

    private static func read(_ count: Int, from observer: LineClient, timeout: Double = 10) throws -> [Heard] {
        try (0..<count).map { _ in
            let event = try observer.readJSON(timeout: timeout)
            return Heard(seq: event["seq"]?.intValue, keyPath: event["keyPath"]?.stringValue,
                         kind: event["kind"]?.stringValue, indexes: event["indexes"], new: event["new"])
        }
    }
}
