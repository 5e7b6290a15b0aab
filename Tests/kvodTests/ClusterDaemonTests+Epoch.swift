import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// The cluster's epoch (docs/CLUSTER.md): one UUID per prefix at
/// `<prefix>meta/epoch`, mixed with etcd's cluster id.
extension ClusterDaemonTests {
    @Test func kvodsOfOnePrefixShareAnEpochThatAnotherPrefixOrARemadeEpochKeyDoesNot() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let url = cluster.clientURLs[0]
        let a = try await KVODProcess(arguments: ["--etcd", url])
        let b = try await KVODProcess(arguments: ["--etcd", url])
        let other = try await KVODProcess(arguments: ["--etcd", url, "--etcd-prefix", "/other/"])
        let stored = try await Self.etcdctl(cluster, ["get", "--print-value-only", "/kvod/meta/epoch"])
        #expect(stored.count == 36 && stored.split(separator: "-").count == 5, "a UUID: \(stored)")
        try Self.checkEpochs(a: a.socketPath, b: b.socketPath, other: other.socketPath)
        let before = try Self.resumePoint(a.socketPath)
        let watcher = try Self.observeEverything(a.socketPath)
        _ = try await Self.etcdctl(cluster, ["del", "/kvod/meta/epoch"])
        try Self.checkRemadeEpoch(a: a.socketPath, b: b.socketPath, old: before, watcher: watcher)
        let remade = try await Self.etcdctl(cluster, ["get", "--print-value-only", "/kvod/meta/epoch"])
        #expect(remade.count == 36 && remade != stored, "\(remade)")
    }

    /// `a` and `b` tell one epoch; `other`'s prefix another, and a resume
    /// point of `a`'s epoch is `compacted` there.
    private static func checkEpochs(a: String, b: String, other: String) throws {
        let point = try resumePoint(a)
        #expect(try resumePoint(b).epoch == point.epoch)
        let otherEpoch = try resumePoint(other).epoch
        #expect(otherEpoch != point.epoch && otherEpoch.count == 16)
        let refused = try LineClient(path: other).request(
            #"{"op":"observe","object":"o","since":0,"epoch":"\#(point.epoch)"}"#).reply
        #expect(refused["error"]?["code"] == "compacted" && refused["error"]?["epoch"] == .string(otherEpoch),
                "\(refused)")
    }

    /// Once the epoch key is deleted, a kvod makes it again and both take the
    /// new one: the old resume point is `compacted` on either; the key's
    /// changes reached no observer.
    private static func checkRemadeEpoch(a: String, b: String, old: (epoch: String, seq: Int),
                                         watcher: LineClient) throws {
        var epoch = old.epoch
        try waitUntil("a has a new epoch", timeout: 20, recheckEvery: 0.05) {
            epoch = try info(a)["epoch"]?.stringValue ?? ""
            return epoch != old.epoch
        }
        try waitUntil("b has a's new epoch", timeout: 20, recheckEvery: 0.05) { try info(b)["epoch"] == .string(epoch) }
        for socket in [a, b] {
            let refused = try LineClient(path: socket).request(
                #"{"op":"observe","object":"o","since":\#(old.seq),"epoch":"\#(old.epoch)"}"#).reply
            #expect(refused["error"]?["code"] == "compacted", "\(refused)")
            let resumed = try LineClient(path: socket).request(
                #"{"op":"observe","object":"o","since":\#(old.seq),"epoch":"\#(epoch)"}"#).reply
            #expect(resumed["ok"] == true, "the new epoch resumes from the current seq: \(resumed)")
        }
        let listed = try LineClient(path: a).request(#"{"op":"list"}"#).reply
        #expect(listed["objects"] == ["o"], "the epoch key is no object: \(listed)")
        let set = try LineClient(path: a).request(#"{"op":"set","object":"o","keyPath":"k","value":2}"#, timeout: 30).reply
        let next = try watcher.readJSON(timeout: 30)
        #expect(next["object"] == "o" && next["seq"] == set["seq"], "the epoch key's changes are no object's: \(next)")
    }

    /// An observer of every object on `socket`, after one set there.
    private static func observeEverything(_ socket: String) throws -> LineClient {
        let watcher = try LineClient(path: socket)
        #expect(try watcher.request(#"{"op":"observe","prefix":"","options":["new"]}"#).reply["ok"] == true)
        return watcher
    }

    /// What `socket`'s kvod tells as a resume point, after a change there.
    private static func resumePoint(_ socket: String) throws -> (epoch: String, seq: Int) {
        _ = try LineClient(path: socket).request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, timeout: 30)
        let info = try info(socket)
        return (info["epoch"]?.stringValue ?? "", info["seq"]?.intValue ?? -1)
    }

    static func info(_ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(#"{"op":"info"}"#).reply
    }

    static func etcdctl(_ cluster: EtcdCluster, _ arguments: [String]) async throws -> String {
        let run = try await CommandRun.run(EtcdCluster.binaries!.etcdctl, ["--endpoints", cluster.clientURLs[0]] + arguments,
                                           environment: ["ETCDCTL_API": "3"], timeout: 10)
        #expect(run.status == 0, "etcdctl \(arguments): \(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
