import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// `ephemeral` and `ttl` on the ops of a `batch` over etcd (docs/CLUSTER.md):
/// the leased keys go in the batch's one `Txn`, and their ends are deletions
/// told on every kvod with their cause. Two kvods on one etcd member, the
/// batch through kvod A, an observer on kvod B.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterBatchLifetimeTests {
    @Test func theEphemeralValuesOfABatchGoWhenItsOwnerClosesForAnotherKvodsObserverWithCauseDisconnect() async throws {
        let cluster = try await EtcdCluster(size: 1)
        // A lease ttl far longer than the wait: only the owner's close can make the deletions prompt.
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "60"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        var (owner, observer): (LineClient?, LineClient) = try Self.holdEphemeralValuesInABatch(a.socketPath, b.socketPath)
        // The batch's set of `a` ended the leased keys under it, but for the one its set of `a.b` put.
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/e/", "--keys-only"])
            == ["/kvod/e/o/a/b", "/kvod/e/o/q", "/kvod/e/o/x"])
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/l/", "--keys-only"])
            == ["/kvod/l/o/a/b", "/kvod/l/o/q", "/kvod/l/o/x"])
        owner = nil
        try Self.checkDeletedWithTheOwner(closedAt: .now, observer: observer, on: b.socketPath)
        withExtendedLifetime(owner) {}
    }

    @Test func aTTLOnABatchOpExpiresForAnotherKvodsObserverWithCauseTTLUnlessALaterOpEndsItAndEveryKvodTellsExpiresIn()
        async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let (observer, sentAt, answeredAt) = try Self.setTTLsInABatch(a.socketPath, b.socketPath)
        // m's plain set, later in the batch, ended the lease its first set would have put.
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/t/", "--keys-only"])
            == ["/kvod/t/o/k", "/kvod/t/o/long", "/kvod/t/o/single"])
        try Self.checkExpiry(observer, b.socketPath, sentAt: sentAt, answeredAt: answeredAt)
        let record = try await cluster.stored("o").record
        #expect(record.contains(#""cause":"ttl""#), "\(record)")
        // A kvod started since reads the deadlines from the leased values' notes.
        let c = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkExpiresIn(["single", "long"], within: 45...60, on: c.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Through `a`, the owner holds `q` ephemeral (so the object has leased
    /// values before the batch), then a batch sets `a` plainly (`a.b` 0), `a.b` and
    /// `x` ephemeral and `y` plainly; `b`'s observer is told each, and `b`
    /// says which values are ephemeral. Returns the owner and the observer.
    private static func holdEphemeralValuesInABatch(_ a: String, _ b: String) throws -> (LineClient, LineClient) {
        let observer = try LineClient(path: b)
        let observed = try observer.request(
            #"{"op":"observe","object":"o","keyPaths":["q","a.b","x","y"],"options":["new"]}"#).reply
        #expect(observed["ok"] == true, "\(observed)")
        let owner = try LineClient(path: a)
        let single = try owner.request(#"{"op":"set","object":"o","keyPath":"q","value":"a","ephemeral":true}"#,
                                       timeout: 30).reply
        #expect(single["ok"] == true, "\(single)")
        #expect(try observer.readJSON(timeout: 30)["keyPath"] == "q")
        let batch = try owner.request(#"""
            {"op":"batch","ops":[{"op":"set","object":"o","keyPath":"a","value":{"b":0,"c":1}},\#
            {"op":"set","object":"o","keyPath":"a.b","value":"a","ephemeral":true},\#
            {"op":"set","object":"o","keyPath":"x","value":"a","ephemeral":true},\#
            {"op":"set","object":"o","keyPath":"y","value":1}]}
            """#, timeout: 30).reply
        #expect(batch["ok"] == true, "\(batch)")
        let told = try (0..<4).map { _ in try observer.readJSON(timeout: 30)["keyPath"]?.stringValue ?? "?" }
        #expect(told == ["a.b", "a.b", "x", "y"])
        for (key, ephemeral) in [("a.b", true), ("x", true), ("y", false)] {
            let got = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"\#(key)"}"#).reply
            #expect(got["ephemeral"] == (ephemeral ? true : nil), "\(key): \(got)")
        }
        return (owner, observer)
    }

    /// The owner closed at `closedAt`: `b`'s observer is told the deletion of
    /// its three ephemeral values with `cause: disconnect`, long before the lease ttl; the rest stays.
    private static func checkDeletedWithTheOwner(closedAt: ContinuousClock.Instant, observer: LineClient,
                                                 on b: String) throws {
        var deleted: [String] = []
        for _ in 0..<3 {
            let event = try observer.readJSON(timeout: 30)
            #expect((event["new"] ?? .null) == .null && event["cause"] == "disconnect", "\(event)")
            deleted.append(event["keyPath"]?.stringValue ?? "?")
        }
        #expect(ContinuousClock.now - closedAt < .seconds(5), "the lease ttl is 60 s")
        #expect(deleted.sorted() == ["a.b", "q", "x"])
        let kept = try LineClient(path: b).request(#"{"op":"get","object":"o"}"#).reply
        #expect(kept["value"] == ["a": ["c": 1], "y": 1], "\(kept)")
    }

    /// Through `a`, `single` is set with a ttl of 60 s, then a batch sets `k`
    /// with a ttl of 2 s, `m` with one and then without, and `long` with a
    /// ttl of 60 s; `b`'s observer is told `k` and `m`'s, and `b` tells each
    /// one's `expiresIn`. Returns the observer, when the batch was sent and
    /// when it was answered.
    private static func setTTLsInABatch(_ a: String, _ b: String) throws
        -> (LineClient, ContinuousClock.Instant, ContinuousClock.Instant) {
        let observer = try LineClient(path: b)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPaths":["k","m"],"options":["new"]}"#)
        let single = try LineClient(path: a).request(#"{"op":"set","object":"o","keyPath":"single","value":1,"ttl":60}"#,
                                                     timeout: 30).reply
        #expect(single["ok"] == true, "\(single)")
        let sentAt = ContinuousClock.now
        let reply = try LineClient(path: a).request(#"""
            {"op":"batch","ops":[{"op":"set","object":"o","keyPath":"k","value":1,"ttl":2},\#
            {"op":"set","object":"o","keyPath":"m","value":1,"ttl":2},{"op":"set","object":"o","keyPath":"m","value":2},\#
            {"op":"set","object":"o","keyPath":"long","value":1,"ttl":60}]}
            """#, timeout: 30).reply
        let answeredAt = ContinuousClock.now
        #expect(reply["ok"] == true, "\(reply)")
        for _ in 0..<3 { _ = try observer.readJSON(timeout: 30) }
        try checkExpiresIn(["k"], within: 1...2, on: b)
        try checkExpiresIn(["single", "long"], within: 55...60, on: b)
        return (observer, sentAt, answeredAt)
    }

    /// `get` of each key of `o` on `socket` tells an `expiresIn` in `range`.
    private static func checkExpiresIn(_ keys: [String], within range: ClosedRange<Int>, on socket: String) throws {
        for key in keys {
            let got = try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"\#(key)"}"#).reply
            let left = try #require(got["expiresIn"]?.intValue, "\(key): \(got)")
            #expect(range.contains(left) && got["value"] == 1 && got["ephemeral"] == nil, "\(key): \(got)")
        }
    }

    /// `k` is deleted for the observer with `cause: ttl` at its deadline (not
    /// before); `m`, whose ttl a later op ended, stays.
    private static func checkExpiry(_ observer: LineClient, _ b: String, sentAt: ContinuousClock.Instant,
                                    answeredAt: ContinuousClock.Instant) throws {
        let k = try observer.readJSON(timeout: 30)
        let kAt = ContinuousClock.now
        #expect(k["keyPath"] == "k" && (k["new"] ?? .null) == .null && k["cause"] == "ttl", "\(k)")
        #expect(kAt - sentAt >= .seconds(2), "deleted \(kAt - sentAt) after the batch was sent")
        #expect(kAt - answeredAt < .seconds(4), "deleted \(kAt - answeredAt) after the batch's reply")
        let m = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"m"}"#).reply
        #expect(m["value"] == 2, "\(m)")
    }

    /// etcdctl's output lines for `arguments`, on the cluster's first member.
    private static func etcd(_ cluster: EtcdCluster, _ arguments: [String]) async throws -> [String] {
        let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, ["--endpoints", cluster.clientURLs[0]] + arguments,
                                           environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(run.status == 0, "\(run.stderr)")
        return run.lines.filter { !$0.isEmpty }
    }
}
