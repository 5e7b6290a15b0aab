import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real etcd cluster for one measurement: `members` processes of Debian's
/// `etcd` on free loopback ports, their data in a fresh folder under /tmp (the
/// disk each member fsyncs to), stopped and removed after it, as
/// `Tests/KVOTestSupport/EtcdCluster.swift` starts one for the tests.
final class EtcdServers {
    let directory: String
    /// Each member's client port (its JSON gateway and gRPC, on one port).
    let clientPorts: [Int]
    private var processes: [Process] = []

    var clientURLs: [String] { clientPorts.map { "http://127.0.0.1:\($0)" } }

    init(members: Int, binary: String) throws(BenchError) {
        var template = Array("\(ServerProcess.parentDirectory)/kvod-bench-etcd-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(UnixSocket.errorText())") }
        directory = String(cString: made)
        let ports = try LoopbackTCP.freePorts(members * 2)
        clientPorts = Array(ports[..<members])
        let names = (0..<members).map { "m\($0)" }
        let peerURLs = ports[members...].map { "http://127.0.0.1:\($0)" }
        let initialCluster = zip(names, peerURLs).map { "\($0)=\($1)" }.joined(separator: ",")
        for index in 0..<members {
            let clientURL = "http://127.0.0.1:\(clientPorts[index])"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [
                "--name", names[index], "--data-dir", "\(directory)/\(names[index])",
                "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
                "--listen-peer-urls", peerURLs[index], "--initial-advertise-peer-urls", peerURLs[index],
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", URL(fileURLWithPath: directory).lastPathComponent,
            ]
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ETCD") }
            let log = "\(directory)/\(names[index]).log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: log)
            process.standardOutput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                stop()
                throw BenchError("starting \(binary): \(error)")
            }
            processes.append(process)
        }
        try waitUntilHealthy()
    }

    /// Until every member answers `/health` with `"health":"true"` (a leader,
    /// and a quorum read through it), at most 30 s.
    private func waitUntilHealthy() throws(BenchError) {
        let deadline = monotonicNanoseconds() + 30_000_000_000
        for (index, port) in clientPorts.enumerated() {
            while !(LoopbackTCP.get(port: port, path: "/health")?.contains(#""health":"true""#) ?? false) {
                guard processes[index].isRunning else {
                    let log = (try? String(contentsOfFile: "\(directory)/m\(index).log", encoding: .utf8)) ?? ""
                    stop()
                    throw BenchError("etcd member m\(index) exited at start: \(log.suffix(600))")
                }
                guard monotonicNanoseconds() < deadline else {
                    stop()
                    throw BenchError("etcd member m\(index) was not healthy within 30 s")
                }
                usleep(50_000)
            }
        }
    }

    /// The cluster's revision now (a range of one key through member 0): how
    /// many revisions, so `Txn`s, a run made. Nil when it cannot be read.
    func revision() -> Int? {
        guard let response = LoopbackTCP.post(port: clientPorts[0], path: "/v3/kv/range", body: #"{"key":"AA=="}"#),
              let member = response.range(of: #""revision":""#) else { return nil }
        return Int(response[member.upperBound...].prefix { $0.isNumber })
    }

    /// The CPU time all members have used so far.
    func cpuSeconds() -> Double { processes.reduce(0) { $0 + ProcessCPU.seconds($1.processIdentifier) } }

    /// Stops every member and removes the folder. SIGKILL: the data is thrown
    /// away, and on SIGTERM each member hands leadership over first, for seconds.
    func stop() {
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
        processes = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}
