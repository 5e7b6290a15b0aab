import Foundation
import Glibc

/// A real etcd cluster for one test: `size` members of Debian's `etcd` on
/// free loopback ports, each in a temporary folder, removed with this object.
public final class EtcdCluster: @unchecked Sendable {
    // @unchecked: the members' processes are only touched by the test that owns this object.

    /// One member: its name, its client URL and its process.
    public struct Member {
        public let name: String
        public let clientURL: String
        public let process: Process
    }

    public let members: [Member]
    public let directory: String

    /// Where `etcd` and `etcdctl` are, when both are installed (`apt-get install etcd-server etcd-client`).
    public static let binaries: (etcd: URL, etcdctl: URL)? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        func find(_ name: String) -> URL? {
            path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        }
        guard let etcd = find("etcd"), let etcdctl = find("etcdctl") else { return nil }
        return (etcd, etcdctl)
    }()

    public static var isInstalled: Bool { binaries != nil }

    /// Starts the members, each with `arguments` added to its command line, and
    /// waits until every one of them is healthy (the cluster has a leader and
    /// each member serves a quorum read).
    public init(size: Int = 3, arguments: [String] = [], timeout: Double = 30) async throws {
        guard let binaries = Self.binaries else { throw TestFailure("etcd and etcdctl are not installed") }
        directory = try TemporaryDirectory.make()
        let ports = try LoopbackPorts.free(size * 2)
        let names = (0..<size).map { "m\($0)" }
        let peerURLs = (0..<size).map { "http://127.0.0.1:\(ports[size + $0])" }
        let initialCluster = zip(names, peerURLs).map { "\($0)=\($1)" }.joined(separator: ",")
        var members: [Member] = []
        for index in 0..<size {
            let clientURL = "http://127.0.0.1:\(ports[index])"
            let process = Process()
            process.executableURL = binaries.etcd
            process.arguments = [
                "--name", names[index], "--data-dir", "\(directory)/\(names[index])",
                "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
                "--listen-peer-urls", peerURLs[index], "--initial-advertise-peer-urls", peerURLs[index],
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", URL(fileURLWithPath: directory).lastPathComponent,
            ] + arguments
            process.environment = KVODProcess.inheritedEnvironment.filter { !$0.key.hasPrefix("ETCD") }
            let log = "\(directory)/\(names[index]).log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: log)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            members.append(Member(name: names[index], clientURL: clientURL, process: process))
        }
        self.members = members
        try await waitUntilHealthy(members.map(\.clientURL), timeout: timeout)
    }

    deinit {
        for member in members where member.process.isRunning {
            Glibc.kill(member.process.processIdentifier, SIGKILL)
            member.process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var clientURLs: [String] { members.map(\.clientURL) }

    /// Waits until every endpoint in `endpoints` is healthy.
    public func waitUntilHealthy(_ endpoints: [String], timeout: Double = 30) async throws {
        try await waitUntil("etcd members \(endpoints) are healthy", timeout: timeout) { () async throws -> Bool in
            for member in members where !member.process.isRunning {
                throw TestFailure("etcd member \(member.name) exited: \(log(of: member))")
            }
            let run = try await CommandRun.run(Self.binaries!.etcdctl, [
                "--endpoints", endpoints.joined(separator: ","), "--command-timeout", "2s", "endpoint", "health",
            ], environment: ["ETCDCTL_API": "3"], timeout: 10)
            return run.status == 0
        }
    }

    /// Kills member `index` with SIGKILL and waits until it is gone.
    public func kill(member index: Int) async throws {
        let process = members[index].process
        Glibc.kill(process.processIdentifier, SIGKILL)
        try await waitUntil("etcd member \(members[index].name) exits", timeout: 10) { () async -> Bool in
            !process.isRunning
        }
    }

    /// What a member wrote to stderr so far.
    public func log(of member: Member) -> String {
        (try? String(contentsOfFile: "\(directory)/\(member.name).log", encoding: .utf8)) ?? ""
    }
}
