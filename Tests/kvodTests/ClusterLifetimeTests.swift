import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Ephemeral values and `ttl` over etcd (docs/CLUSTER.md): two kvods on one
/// etcd member, a value set through kvod A, an observer on kvod B.
@Suite(.enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterLifetimeTests {
    /// The lease ttl of the kvod that dies: its values must go within it (the default is 10 s).
    static let leaseTTL = 2.0

    @Test func anEphemeralValueOfAKilledKvodIsDeletedForAnotherKvodsObserverWithinTheLeaseTTL() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "2"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let (owner, observer) = try Self.holdEphemeralValues(["leader"], through: a.socketPath, observedOn: b.socketPath)
        let killedAt = ContinuousClock.now
        try await a.kill()
        let elapsed = try Self.checkDeleted(["leader"], cause: "disconnect", by: observer, on: b.socketPath) - killedAt
        #expect(elapsed < .seconds(Self.leaseTTL + 1), "deleted \(elapsed) after the kill, lease ttl \(Self.leaseTTL) s")
        withExtendedLifetime(owner) {}
    }

    @Test func closingTheOwnersConnectionDeletesItsEphemeralValueAtOnceForAnotherKvodsObserver() async throws {
        let cluster = try await EtcdCluster(size: 1)
        // A lease ttl far longer than the wait: only the revoke can make the deletion prompt.
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "60"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkDeletedWhenTheOwnerCloses(a.socketPath, b.socketPath)
    }

    @Test func aTTLValueSetThroughOneKvodIsDeletedAtItsDeadlineForAnotherKvodsObserverAndASetWithoutTTLKeepsIt()
        async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkTTL(a.socketPath, b.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Sets each key of object `o` ephemeral through `a`, observed on `b`:
    /// both kvods say the value is ephemeral. Returns the owner and the observer.
    private static func holdEphemeralValues(_ keys: [String], through a: String,
                                            observedOn b: String) throws -> (LineClient, LineClient) {
        let observer = try LineClient(path: b)
        let paths = keys.map { "\"\($0)\"" }.joined(separator: ",")
        let observed = try observer.request(#"{"op":"observe","object":"o","keyPaths":[\#(paths)],"options":["new"]}"#).reply
        #expect(observed["ok"] == true, "\(observed)")
        let owner = try LineClient(path: a)
        for key in keys {
            let set = try owner.request(#"{"op":"set","object":"o","keyPath":"\#(key)","value":"a","ephemeral":true}"#,
                                        timeout: 30).reply
            #expect(set["ok"] == true, "\(set)")
            let event = try observer.readJSON(timeout: 30)
            #expect(event["keyPath"]?.stringValue == key && event["new"] == "a" && event["seq"] == set["seq"], "\(event)")
        }
        for socket in [a, b] {
            let got = try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"\#(keys[0])"}"#).reply
            #expect(got["value"] == "a" && got["ephemeral"] == true, "\(got)")
        }
        return (owner, observer)
    }

    /// Waits for the observer's event deleting `keys` (in any order) with
    /// `cause`; the value is gone on `b` too. Returns when the last came.
    private static func checkDeleted(_ keys: [String], cause: String, by observer: LineClient,
                                     on b: String) throws -> ContinuousClock.Instant {
        var deleted: [String] = []
        for _ in keys {
            let event = try observer.readJSON(timeout: 30)
            #expect((event["new"] ?? .null) == .null && event["cause"]?.stringValue == cause, "\(event)")
            deleted.append(event["keyPath"]?.stringValue ?? "?")
        }
        let at = ContinuousClock.now
        #expect(deleted.sorted() == keys.sorted())
        let got = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"\#(keys[0])"}"#).reply
        #expect(got["error"]?["code"] == "not_found", "\(got)")
        return at
    }

    /// The owner holds `x` and `y` ephemeral through `a`; a client of `b`
    /// sets `y` plainly (the owner no longer owns it); the owner closes: `x`
    /// goes at once, with `cause: disconnect`, and `y` stays.
    private static func checkDeletedWhenTheOwnerCloses(_ a: String, _ b: String) throws {
        var (owner, observer): (LineClient?, LineClient) = try holdEphemeralValues(["x", "y"], through: a, observedOn: b)
        let plain = try LineClient(path: b).request(#"{"op":"set","object":"o","keyPath":"y","value":"b"}"#, timeout: 30).reply
        #expect(plain["ok"] == true, "\(plain)")
        #expect(try observer.readJSON(timeout: 30)["new"] == "b")
        let closedAt = ContinuousClock.now
        owner = nil
        let elapsed = try checkDeleted(["x"], cause: "disconnect", by: observer, on: b) - closedAt
        #expect(elapsed < .seconds(5), "deleted \(elapsed) after the close; the lease ttl is 60 s")
        withExtendedLifetime(owner) {}
        let kept = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"y"}"#).reply
        #expect(kept["value"] == "b" && kept["ephemeral"] == nil, "\(kept)")
    }

    /// `k` set with a ttl of 2 s through `a` is deleted for `b`'s observer at
    /// its deadline (not before) with `cause: ttl`; `m` set with a ttl and
    /// then without one is kept: the next event after `k`'s deletion is
    /// the deletion of `n`, set with a ttl after `m`'s plain set, and `m` is there.
    private static func checkTTL(_ a: String, _ b: String) throws {
        let observer = try LineClient(path: b)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPaths":["k","m","n"],"options":["new"]}"#)
        let writer = try LineClient(path: a)
        let lines = [
            #"{"op":"set","object":"o","keyPath":"k","value":1,"ttl":2}"#,
            #"{"op":"set","object":"o","keyPath":"m","value":1,"ttl":2}"#,
            #"{"op":"set","object":"o","keyPath":"m","value":2}"#,
            #"{"op":"set","object":"o","keyPath":"n","value":1,"ttl":3}"#,
        ]
        var setAt: [ContinuousClock.Instant] = []
        for line in lines {
            let reply = try writer.request(line, timeout: 30).reply
            #expect(reply["ok"] == true, "\(reply)")
            setAt.append(.now)
            _ = try observer.readJSON(timeout: 30)
        }
        let k = try observer.readJSON(timeout: 30)
        let kAt = ContinuousClock.now
        #expect(k["keyPath"] == "k" && (k["new"] ?? .null) == .null && k["cause"] == "ttl", "\(k)")
        #expect(kAt - setAt[0] >= .seconds(2) && kAt - setAt[0] < .seconds(4), "\(kAt - setAt[0]) after the set")
        let n = try observer.readJSON(timeout: 30)
        #expect(n["keyPath"] == "n" && n["cause"] == "ttl", "m's plain set kept it: \(n)")
        let m = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"m"}"#).reply
        #expect(m["value"] == 2, "\(m)")
    }
}
