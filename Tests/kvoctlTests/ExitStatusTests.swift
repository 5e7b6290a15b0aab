import Foundation
import KVOTestSupport
import Testing

/// kvoctl's exit statuses 8 to 12, one kind of failure each, every one
/// brought about against the real kvod (docs/CLIENT.md, "Exit statuses");
/// and the table in `kvoctl --help` that documents them.
@Suite(.onDedicatedThread) struct ExitStatusTests {
    /// `run` exited `status` with one line on standard error starting `reason`, and `--quiet` left it out.
    private static func expect(_ kvod: KVODProcess, _ arguments: [String], status: Int32, reason: String,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let run = try await KVOCtl.run(kvod, arguments)
        #expect(run.status == status && run.stderr.hasPrefix(reason) && run.stderr.filter { $0 == "\n" }.count == 1,
                "\(arguments): \(run)", sourceLocation: sourceLocation)
        let quiet = try await KVOCtl.run(kvod, ["--quiet"] + arguments)
        #expect(quiet.status == status && quiet.stderr.isEmpty, "\(arguments) --quiet: \(quiet)",
                sourceLocation: sourceLocation)
    }

    @Test func notFoundExits8() async throws {
        let kvod = try await KVODProcess()
        try await Self.expect(kvod, ["get", "person/1"], status: 8, reason: "kvoctl: not_found: ")
        _ = try await KVOCtl.run(kvod, ["set", "person/1", "name", "xsc"])
        try await Self.expect(kvod, ["get", "person/1", "age"], status: 8,
                              reason: "kvoctl: not_found: person/1 has no value at age")
    }

    @Test func badRequestExits10() async throws {
        let kvod = try await KVODProcess()
        try await Self.expect(kvod, ["get", "person/1", "a..b"], status: 10, reason: "kvoctl: bad_request: ")
    }

    @Test func anotherRefusalStillExits1() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "person/1", "name", "xsc"])
        try await Self.expect(kvod, ["set", "person/1", "name.first", "x"], status: 1,
                              reason: "kvoctl: not_an_object: ")
    }

    /// kvod runs as root with a policy that grants `nobody` nothing; kvoctl runs as `nobody`.
    @Test(.enabled(if: getuid() == 0, "switching users needs root"))
    func forbiddenExits9() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policy = directory + "/policy.json"
        try #"{"grants": [{"user": "nobody", "prefix": "public/", "allow": ["read"]}]}"#
            .write(toFile: policy, atomically: true, encoding: .utf8)
        let kvod = try await KVODProcess(arguments: ["--socket-mode", "0666", "--policy", policy])
        chmod(kvod.directory, 0o755)
        _ = try await KVOCtl.run(kvod, ["set", "secret/1", "k", "1"])
        // A copy of kvoctl that nobody may run, whatever the build directory's modes.
        let kvoctl = directory + "/kvoctl"
        try FileManager.default.copyItem(atPath: KVOCtl.binaryURL.path, toPath: kvoctl)
        chmod(directory, 0o755)
        chmod(kvoctl, 0o755)
        for (arguments, status, reason) in [
            (["get", "secret/1", "k"], Int32(9), "kvoctl: forbidden: "),
            (["set", "public/1", "k", "1"], 9, "kvoctl: forbidden: "),
            (["get", "public/1", "k"], 8, "kvoctl: not_found: "),
        ] {
            let asNobody = ["--reuid", "nobody", "--regid", "nogroup", "--clear-groups", kvoctl]
            let run = try await CommandRun.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                               asNobody + arguments + ["--socket", kvod.socketPath])
            #expect(run.status == status && run.stderr.hasPrefix(reason), "\(arguments): \(run)")
            let quiet = try await CommandRun.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                                 asNobody + arguments + ["--socket", kvod.socketPath, "--quiet"])
            #expect(quiet.status == status && quiet.stderr.isEmpty, "\(arguments) --quiet: \(quiet)")
        }
    }

    /// kvod over a one-member etcd, which is then killed: a change cannot be made.
    @Test(.enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"))
    func unavailableExits11() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        #expect(try await KVOCtl.run(kvod, ["set", "o", "k", "1"]).status == 0)
        try await cluster.kill(member: 0)
        // The event: kvod sees its member gone and says so (its watch ends, or its probe gets no answer).
        try await waitUntil("kvod says it is stale", timeout: 30) { () async throws -> Bool in
            try await KVOCtl.run(kvod, ["info"]).stdout.contains(#""stale":true"#)
        }
        let run = try await KVOCtl.run(kvod, ["set", "o", "k", "2", "--request-timeout", "10s"])
        #expect(run.status == 11 && run.stderr.hasPrefix("kvoctl: unavailable: "), "\(run)")
        let quiet = try await KVOCtl.run(kvod, ["set", "o", "k", "3", "--quiet", "--request-timeout", "10s"])
        #expect(quiet.status == 11 && quiet.stderr.isEmpty, "\(quiet)")
    }

    /// A kvod stopped with SIGSTOP: its kernel takes the connection, nothing answers.
    @Test func noReplyWithinRequestTimeoutExits12() async throws {
        let kvod = try await KVODProcess()
        kvod.signal(SIGSTOP)
        defer { kvod.signal(SIGCONT) }
        for placement in [["get", "o", "--request-timeout", "300ms"], ["--request-timeout", "0.3", "get", "o"]] {
            let started = ContinuousClock.now
            try await Self.expect(kvod, placement, status: 12, reason: "kvoctl: timed_out: ")
            #expect(ContinuousClock.now - started < .seconds(20), "\(placement)")
        }
        let zero = try await KVOCtl.run(kvod, ["get", "o", "--request-timeout", "0s"])
        #expect(zero.status == 2 && zero.stderr.contains("--request-timeout"), "\(zero)")
    }

    @Test func helpDocumentsEveryExitStatus() async throws {
        let help = try await KVOCtl.run(["--help"])
        for line in ["0   ok", "1   kvod refused", "2   usage", "3   cannot connect", "4   observe --count",
                     "5   a condition", "6   observe cannot resume", "7   --await", "8   not found",
                     "9   forbidden", "10  bad request", "11  unavailable", "12  no reply", "13  kvod's disk is full"] {
            #expect(help.stdout.contains(line), "kvoctl --help lacks \(line)")
        }
        let clientDoc = try String(contentsOf: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().appendingPathComponent("../../docs/CLIENT.md").standardized, encoding: .utf8)
        for status in 0...13 {
            #expect(clientDoc.contains("\n| \(status) |"), "docs/CLIENT.md's table lacks exit status \(status)")
        }
    }
}
