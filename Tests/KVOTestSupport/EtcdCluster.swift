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
        public let process: ChildProcess
    }

    public private(set) var members: [Member]
    public let directory: String
    /// Each member's command line, to start it again after ``kill(member:)``.
    private var commandLines: [[String]] = []

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
    /// each member serves a quorum read). Each member serves clients on
    /// 127.0.0.1 and also on each address of `clientHosts`, at the same port
    /// (a ``NetworkNamespace``'s root side, for a kvod inside: ``clientURL(of:on:)``).
    public init(size: Int = 3, arguments: [String] = [], clientHosts: [String] = [], timeout: Double = 60) async throws {
        guard let binaries = Self.binaries else { throw TestFailure("etcd and etcdctl are not installed") }
        directory = try TemporaryDirectory.make()
        (members, commandLines) = try Self.launch(size, arguments, clientHosts, binaries.etcd, in: directory)
        // A port chosen free can be taken before etcd binds it (an outgoing
        // connection's local port, in a parallel run): then start again on others.
        for attempt in 1... {
            do {
                try await waitUntilHealthy(members.map(\.clientURL), timeout: timeout)
                return
            } catch where attempt < 3 && members.contains(where: { log(of: $0).contains("address already in use") }) {
                for index in members.indices { try await kill(member: index) }
                try FileManager.default.removeItem(atPath: directory)
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                (members, commandLines) = try Self.launch(size, arguments, clientHosts, binaries.etcd, in: directory)
            }
        }
    }

    /// Starts `size` members on free ports, with their data and logs in `directory`.
    private static func launch(_ size: Int, _ arguments: [String], _ clientHosts: [String], _ etcd: URL,
                               in directory: String) throws
        -> ([Member], [[String]])
    {
        let ports = try LoopbackPorts.free(size * 2)
        let names = (0..<size).map { "m\($0)" }
        let peerURLs = (0..<size).map { "http://127.0.0.1:\(ports[size + $0])" }
        let initialCluster = zip(names, peerURLs).map { "\($0)=\($1)" }.joined(separator: ",")
        var members: [Member] = []
        var commandLines: [[String]] = []
        for index in 0..<size {
            let clientURL = "http://127.0.0.1:\(ports[index])"
            let listenURLs = ([clientURL] + clientHosts.map { "http://\($0):\(ports[index])" }).joined(separator: ",")
            commandLines.append([
                "--name", names[index], "--data-dir", "\(directory)/\(names[index])",
                "--listen-client-urls", listenURLs, "--advertise-client-urls", clientURL,
                "--listen-peer-urls", peerURLs[index], "--initial-advertise-peer-urls", peerURLs[index],
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", URL(fileURLWithPath: directory).lastPathComponent,
            ] + arguments)
            let process = try launch(etcd, commandLines[index], log: "\(directory)/\(names[index]).log")
            members.append(Member(name: names[index], clientURL: clientURL, process: process))
        }
        return (members, commandLines)
    }

    deinit {
        for member in members { ChildExit.kill(member.process) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var clientURLs: [String] { members.map(\.clientURL) }

    /// Member `index`'s client URL on `host`, one of the `clientHosts` it was started with.
    public func clientURL(of index: Int, on host: String) -> String {
        "http://\(host):\(URL(string: members[index].clientURL)!.port!)"
    }

    private static func launch(_ etcd: URL, _ arguments: [String], log: String) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = etcd
        process.arguments = arguments
        process.environment = KVODProcess.inheritedEnvironment.filter { !$0.key.hasPrefix("ETCD") }
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let handle = FileHandle(forWritingAtPath: log)
        handle?.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts member `index` again, on its data, after ``kill(member:)``, and
    /// waits until it is healthy.
    public func restart(member index: Int) async throws {
        let member = members[index]
        let process = try Self.launch(Self.binaries!.etcd, commandLines[index], log: "\(directory)/\(member.name).log")
        members[index] = Member(name: member.name, clientURL: member.clientURL, process: process)
        try await waitUntilHealthy([member.clientURL])
    }

    /// Waits until every endpoint in `endpoints` is healthy (other members may be down).
    public func waitUntilHealthy(_ endpoints: [String], timeout: Double = 30) async throws {
        try await waitUntil("etcd members \(endpoints) are healthy", timeout: timeout) { () async throws -> Bool in
            for member in members where endpoints.contains(member.clientURL) && ChildExit.status(of: member.process) != nil {
                throw TestFailure("etcd member \(member.name) exited: \(log(of: member))")
            }
            // A quorum read each: a parallel run (load 20+) can take seconds for one.
            let run = try await CommandRun.run(Self.binaries!.etcdctl, [
                "--endpoints", endpoints.joined(separator: ","), "--command-timeout", "10s", "endpoint", "health",
            ], environment: ["ETCDCTL_API": "3"], timeout: 20)
            return run.status == 0
        }
    }

    /// Kills member `index` with SIGKILL and waits until it is gone.
    public func kill(member index: Int) async throws {
        let process = members[index].process
        Glibc.kill(process.processIdentifier, SIGKILL)
        try await waitUntil("etcd member \(members[index].name) exits", timeout: 10) { () async -> Bool in
            ChildExit.status(of: process) != nil
        }
    }

    /// Stops member `index` with SIGSTOP, as a hung process or a frozen VM:
    /// its kernel still takes connections, and nothing answers them.
    public func pause(member index: Int) {
        Glibc.kill(members[index].process.processIdentifier, SIGSTOP)
    }

    /// Lets member `index` run again after ``pause(member:)``.
    public func resume(member index: Int) {
        Glibc.kill(members[index].process.processIdentifier, SIGCONT)
    }

    /// What a member wrote to stderr so far.
    public func log(of member: Member) -> String {
        (try? String(contentsOfFile: "\(directory)/\(member.name).log", encoding: .utf8)) ?? ""
    }
}
