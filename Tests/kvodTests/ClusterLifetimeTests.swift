import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Ephemeral values and `ttl` over etcd (docs/CLUSTER.md): two kvods on one
/// etcd member, a value set through kvod A, an observer on kvod B.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterLifetimeTests {
    /// The lease ttl of the kvod that dies: its values must go within it (the default is 10 s).
    static let leaseTTL = 2.0

    @Test func anEphemeralValueOfAKilledKvodIsDeletedForAnotherKvodsObserverWithinTheLeaseTTL() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "2"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let (owner, observer) = try Self.holdEphemeralValues(["leader"], through: a.socketPath, observedOn: b.socketPath)
        // A kvod started since learns which values are leased from etcd's leased keys.
        let c = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkEphemeral("leader", on: c.socketPath)
        let killedAt = ContinuousClock.now
        try await a.kill()
        let elapsed = try Self.checkDeleted(["leader"], cause: "disconnect", by: observer, on: b.socketPath) - killedAt
        #expect(elapsed < .seconds(Self.leaseTTL + 1.5), "deleted \(elapsed) after the kill, lease ttl \(Self.leaseTTL) s")
        withExtendedLifetime(owner) {}
    }

    @Test func closingTheOwnersConnectionDeletesItsEphemeralValueAtOnceForAnotherKvodsObserver() async throws {
        let cluster = try await EtcdCluster(size: 1)
        // A lease ttl far longer than the wait: only the revoke can make the deletion prompt.
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "60"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        var (owner, observer): (LineClient?, LineClient) = try Self.holdThreeValuesAndTakeTwoOver(a.socketPath, b.socketPath)
        // The plain set and the batch through b ended y's and z's leased keys and notes in their Txns.
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/e/", "--keys-only"]) == ["/kvod/e/o/x"])
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/l/", "--keys-only"]) == ["/kvod/l/o/x"])
        for object in ["p", "q"] {
            let record = try await cluster.stored(object).record
            #expect(record.contains(#""uid":\#(getuid())"#) && record.contains(#""host":"\#(Self.hostName)""#),
                    "\(record)")
        }
        let closedAt = ContinuousClock.now
        owner = nil
        let elapsed = try Self.checkDeleted(["x"], cause: "disconnect", by: observer, on: b.socketPath) - closedAt
        #expect(elapsed < .seconds(5), "deleted \(elapsed) after the close; the lease ttl is 60 s")
        withExtendedLifetime(owner) {}
        let deletion = try await cluster.stored("o").record
        #expect(deletion.contains(#""cause":"disconnect""#) && !deletion.contains("uid"), "kvod's own: \(deletion)")
        try Self.checkKept(b.socketPath)
        // A leased key whose value is no longer the one it leased (put by hand here) ends and deletes nothing.
        let lease = try await Self.etcd(cluster, ["lease", "grant", "60"]).first?.split(separator: " ")[1] ?? "?"
        _ = try await Self.etcd(cluster, ["put", "--lease", String(lease), "/kvod/e/o/y",
                                          #"{"object":"o","path":["y"],"cause":"disconnect","host":"elsewhere"}"#])
        _ = try await Self.etcd(cluster, ["lease", "revoke", String(lease)])
        try Self.checkNothingBefore(observer, set: "y", through: b.socketPath)
    }

    @Test func aKvodStoppedWithSIGTERMRevokesItsConnectionsLeasesBeforeItExits() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0], "--etcd-lease-ttl", "60"])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let (owner, observer) = try Self.holdEphemeralValues(["leader"], through: a.socketPath, observedOn: b.socketPath)
        let stoppedAt = ContinuousClock.now
        #expect(try await a.terminate() == 0)
        let elapsed = try Self.checkDeleted(["leader"], cause: "disconnect", by: observer, on: b.socketPath) - stoppedAt
        #expect(elapsed < .seconds(5), "deleted \(elapsed) after the SIGTERM; the lease ttl is 60 s")
        withExtendedLifetime(owner) {}
    }

    @Test func aTTLValueSetThroughOneKvodIsDeletedAtItsDeadlineForAnotherKvodsObserverAndASetWithoutTTLKeepsIt()
        async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkTTL(a.socketPath, b.socketPath)
    }

    @Test func aTTLThatPassedWhileNoKvodFollowedEtcdDeletesItsValueWhenAKvodStarts() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.set(#"{"op":"set","object":"o","keyPath":"k","value":1,"ttl":2}"#, through: a.socketPath)
        try await a.kill()
        try await waitUntil("the ttl's lease expired", timeout: 15, recheckEvery: 0.1) { () async throws -> Bool in
            try await Self.etcd(cluster, ["get", "--prefix", "/kvod/t/", "--keys-only"]).isEmpty
        }
        #expect(try await cluster.stored("o").document == #"{"k":1}"#,
                "nobody deleted it meanwhile")
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        // The value was all the object held, so the object goes with it (issue 34 item 5).
        try await waitUntil("b deleted the object", timeout: 15, recheckEvery: 0.1) { () async throws -> Bool in
            try await Self.etcd(cluster, ["get", "/kvod/o/o", "--print-value-only"]).isEmpty
        }
        let record = try await cluster.stored("o").record
        #expect(record.contains(#""cause":"ttl""#), "\(record)")
        #expect(try await Self.etcd(cluster, ["get", "--prefix", "/kvod/l/", "--keys-only"]).isEmpty, "its note went with it")
        withExtendedLifetime(b) {}
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
        for socket in [a, b] { try checkEphemeral(keys[0], on: socket) }
        return (owner, observer)
    }

    private static func checkEphemeral(_ key: String, on socket: String) throws {
        let got = try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"\#(key)"}"#).reply
        #expect(got["value"] == "a" && got["ephemeral"] == true, "\(got)")
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

    /// The owner holds `x`, `y` and `z` ephemeral through `a`; a client of
    /// `b` sets `y` plainly, then `z` in a batch: the owner no longer owns
    /// them. A set of object `p` and a batch on `q` leave their records to read.
    private static func holdThreeValuesAndTakeTwoOver(_ a: String, _ b: String) throws -> (LineClient, LineClient) {
        let (owner, observer) = try holdEphemeralValues(["x", "y", "z"], through: a, observedOn: b)
        let writer = try LineClient(path: b)
        for line in [
            #"{"op":"set","object":"o","keyPath":"y","value":"b"}"#,
            #"{"op":"batch","ops":[{"op":"set","object":"o","keyPath":"z","value":"b"}]}"#,
        ] {
            let reply = try writer.request(line, timeout: 30).reply
            #expect(reply["ok"] == true, "\(reply)")
            #expect(try observer.readJSON(timeout: 30)["new"] == "b")
        }
        try set(#"{"op":"set","object":"p","keyPath":"k","value":1}"#, through: b)
        try set(#"{"op":"batch","ops":[{"op":"set","object":"q","keyPath":"k","value":1}]}"#, through: b)
        return (owner, observer)
    }

    private static func set(_ line: String, through socket: String) throws {
        let reply = try LineClient(path: socket).request(line, timeout: 30).reply
        #expect(reply["ok"] == true, "\(reply)")
    }

    /// The observer's next event is the set of `key` through `socket`.
    private static func checkNothingBefore(_ observer: LineClient, set key: String, through socket: String) throws {
        let set = try LineClient(path: socket).request(#"{"op":"set","object":"o","keyPath":"\#(key)","value":"c"}"#,
                                                       timeout: 30).reply
        let next = try observer.readJSON(timeout: 30)
        #expect(next["new"] == "c" && next["seq"] == set["seq"], "nothing came before: \(next)")
    }

    /// `y` and `z`, set plainly after their ephemeral sets, stayed when their first owner left.
    private static func checkKept(_ b: String) throws {
        for key in ["y", "z"] {
            let kept = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"\#(key)"}"#).reply
            #expect(kept["value"] == "b" && kept["ephemeral"] == nil, "\(kept)")
        }
    }

    /// etcdctl's output lines for `arguments`, on the cluster's first member.
    private static func etcd(_ cluster: EtcdCluster, _ arguments: [String]) async throws -> [String] {
        let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, ["--endpoints", cluster.clientURLs[0]] + arguments,
                                           environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(run.status == 0, "\(run.stderr)")
        return run.lines.filter { !$0.isEmpty }
    }

    private static let hostName: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

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
        // A ttl runs from some moment between the set's sending and its reply:
        // the value goes no sooner than 2 s after the one, and soon after the other.
        var sentAt: [ContinuousClock.Instant] = [], answeredAt: [ContinuousClock.Instant] = []
        for line in lines {
            sentAt.append(.now)
            let reply = try writer.request(line, timeout: 30).reply
            #expect(reply["ok"] == true, "\(reply)")
            answeredAt.append(.now)
            _ = try observer.readJSON(timeout: 30)
        }
        let k = try observer.readJSON(timeout: 30)
        let kAt = ContinuousClock.now
        #expect(k["keyPath"] == "k" && (k["new"] ?? .null) == .null && k["cause"] == "ttl", "\(k)")
        #expect(kAt - sentAt[0] >= .seconds(2), "deleted \(kAt - sentAt[0]) after the set was sent")
        #expect(kAt - answeredAt[0] < .seconds(4), "deleted \(kAt - answeredAt[0]) after the set's reply")
        let n = try observer.readJSON(timeout: 30)
        #expect(n["keyPath"] == "n" && n["cause"] == "ttl", "m's plain set kept it: \(n)")
        let m = try LineClient(path: b).request(#"{"op":"get","object":"o","keyPath":"m"}"#).reply
        #expect(m["value"] == 2, "\(m)")
    }
}
