import Dispatch
import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Issue 35 item 2: never silently stale. A member under SIGSTOP (a hung
/// process, a frozen VM) keeps its connections (its kernel answers, TCP
/// keepalive too) and sends nothing: its kvod said `stale: false, lag 0` for
/// 16 s while its observers missed every change. Now a probe a second finds it.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterStaleTests {
    @Test func aKvodWhoseMemberIsStoppedSaysStaleWithinFiveSecondsAndCatchesUpWhenItRuns() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try Self.setUntilOK(0, through: b.socketPath)
        try await waitUntil("a has the first value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["value"] == 0
        }
        cluster.pause(member: 0)
        defer { cluster.resume(member: 0) }
        let paused = ContinuousClock.now
        try await waitUntil("a says stale", timeout: 5, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["stale"] == true
        }
        print("stopped member: a said stale \(ContinuousClock.now - paused) after the SIGSTOP")
        // While its member is stopped, a's changes are refused at once, not left hanging.
        let refused = try Self.set(5, through: a.socketPath)
        #expect(refused["error"]?["code"] == "unavailable", "\(refused)")
        #expect(try Self.info(a.socketPath)["cluster"]?["stale"] == true)
        try Self.setUntilOK(1, through: b.socketPath)
        cluster.resume(member: 0)
        try await waitUntil("a follows again and has the value set meanwhile", timeout: 20,
                            recheckEvery: 0.05) { () async throws -> Bool in
            let reply = try Self.get(a.socketPath)
            return reply["value"] == 1 && reply["stale"] == nil
        }
    }

    @Test func aKvodWithEveryEndpointMovesOnFromAStoppedMember() async throws {
        let cluster = try await EtcdCluster()
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs.joined(separator: ",")])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[1]])
        try Self.setUntilOK(0, through: b.socketPath)
        try await waitUntil("a has the first value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            try Self.get(a.socketPath)["value"] == 0
        }
        let endpoint = try Self.info(a.socketPath)["cluster"]?["endpoint"]?.stringValue
        let index = try #require(cluster.clientURLs.firstIndex { $0 == endpoint })
        cluster.pause(member: index)
        defer { cluster.resume(member: index) }
        let writer = index == 1 ? try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[2]]) : b
        try Self.setUntilOK(1, through: writer.socketPath)
        try await waitUntil("a moved on and has the value", timeout: 15, recheckEvery: 0.05) { () async throws -> Bool in
            let reply = try Self.get(a.socketPath)
            return reply["value"] == 1 && reply["stale"] == nil
        }
        #expect(try Self.info(a.socketPath)["cluster"]?["endpoint"]?.stringValue != endpoint)
    }

    /// Other prefixes' writes move etcd's revision and give this kvod's watch
    /// nothing to pass: the liveness check must not take that for a stall.
    @Test func aKvodWhosePrefixIsQuietStaysFreshWhileOtherKeysAreWritten() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.setUntilOK(0, through: a.socketPath)
        let start = ContinuousClock.now
        var puts = 0
        // Six seconds of writes elsewhere: twice the probes a stall needs.
        while ContinuousClock.now - start < .seconds(6), puts < 2_000 {
            let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, [
                "--endpoints", cluster.clientURLs[0], "put", "/elsewhere/k", String(puts),
            ], environment: ["ETCDCTL_API": "3"], timeout: 10)
            #expect(run.status == 0, "\(run.stderr)")
            puts += 1
            #expect(try Self.get(a.socketPath)["stale"] == nil, "stale after \(puts) writes elsewhere")
        }
        #expect(try Self.info(a.socketPath)["cluster"]?["stale"] == false)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    private static func get(_ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply
    }

    private static func info(_ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"info"}"#).reply
    }

    private static func set(_ value: Int, through socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#,
                                             timeout: 20).reply
    }

    /// Sets until a set is ok (an election may be under way), for 20 s at most.
    private static func setUntilOK(_ value: Int, through socket: String) throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let reply = try set(value, through: socket)
            if reply["ok"] == true { return }
            guard ContinuousClock.now < deadline else { throw TestFailure("set \(value) never ok: \(reply)") }
            guard reply["error"]?["code"] == "unavailable" else { throw TestFailure("set \(value): \(reply)") }
            // Each try is a request: an unavailable answer comes at once or after etcd's own timeout.
        }
    }
}
