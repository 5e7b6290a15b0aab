import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server under test, started for one measurement on its own socket in a
/// fresh temporary folder, and stopped after it. With a ``Persistence``
/// other than `.none`, its data (kvod's `data/`, Redis's AOF) goes in that
/// folder too, so both servers write to the same filesystem.
final class ServerProcess {
    let peer: Peer
    let socketPath: String
    private let directory: String?
    private let process: Process?

    /// Where the binaries are.
    struct Binaries: Sendable {
        var kvod: String
        var redisServer: String
        /// Added to kvod's command line (`--kvod-argument`).
        var kvodArguments: [String] = []
    }

    /// Where every server's folder is made.
    static let parentDirectory = "/tmp"

    /// `arguments` are added to kvod's command line (`--etcd URL`, say).
    init(_ peer: Peer, binaries: Binaries, persistence: Persistence = .none, arguments: [String] = []) throws {
        self.peer = peer
        var template = Array("\(Self.parentDirectory)/kvod-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp: \(UnixSocket.errorText())") }
        let directory = String(cString: made)
        self.directory = directory
        socketPath = directory + "/\(peer.rawValue).sock"
        let process = Process()
        self.process = process
        switch peer {
        case .kvod:
            process.executableURL = URL(fileURLWithPath: binaries.kvod)
            process.arguments = ["--socket", socketPath, "--log-level", "warning"]
                + persistence.kvodArguments(directory: directory) + binaries.kvodArguments + arguments
        case .etcd:
            throw BenchError("etcd members are started by EtcdServers")
        case .redis:
            process.executableURL = URL(fileURLWithPath: binaries.redisServer)
            // No snapshots, no TCP, enough clients for the memory scenario;
            // keyspace events (K) for string commands ($), as the set scenarios need.
            process.arguments = [
                "--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700",
                "--save", "", "--dir", directory,
                "--maxclients", "10100", "--notify-keyspace-events", "K$",
                "--loglevel", "warning", "--logfile", "",
            ] + persistence.redisArguments
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        try process.run()
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while !UnixSocket.canConnect(socketPath) {
            guard process.isRunning else { throw BenchError("\(peer.displayName) exited at start") }
            guard monotonicNanoseconds() < deadline else {
                stop()
                throw BenchError("\(peer.displayName) did not accept connections within 20 s")
            }
            usleep(2_000)
        }
    }

    /// A server someone else started (under a profiler, say); ``stop()`` leaves it running.
    init(attachingTo socketPath: String, peer: Peer) throws(BenchError) {
        self.peer = peer
        self.socketPath = socketPath
        directory = nil
        process = nil
        guard UnixSocket.canConnect(socketPath) else { throw BenchError("nothing accepts connections on \(socketPath)") }
    }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Resident memory, from `/proc/<pid>/status` (`VmRSS`), in bytes.
    func residentBytes() -> Int {
        guard pid > 0, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ")
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return 0
    }

    /// Resident memory once it has stopped falling after a burst: read every
    /// 100 ms until 1.5 s pass without a fall (at most 5 s). A server may give
    /// a burst's freed pages back a moment after it (kvod trims at most once a
    /// second; jemalloc purges dirty pages as they age): its steady figure, not
    /// the side of that moment a single read happens to fall on.
    func settledResidentBytes() -> Int {
        let start = monotonicNanoseconds()
        var lowest = residentBytes()
        var lowestSince = start
        while monotonicNanoseconds() - lowestSince < 1_500_000_000, monotonicNanoseconds() - start < 5_000_000_000 {
            usleep(100_000)
            let now = residentBytes()
            if now < lowest {
                lowest = now
                lowestSince = monotonicNanoseconds()
            }
        }
        return lowest
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its folder.
    func stop() {
        guard let process, let directory else { return }
        if process.isRunning {
            kill(pid, SIGTERM)
            let deadline = monotonicNanoseconds() + 10_000_000_000
            while process.isRunning && monotonicNanoseconds() < deadline { usleep(5_000) }
            if process.isRunning {
                kill(pid, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    /// `binary --version`'s first line, for the report (redis-server's, etcd's).
    static func version(_ binary: String) -> String {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--version"]
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "unknown" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let first = String(decoding: data, as: UTF8.self).split(separator: "\n").first ?? ""
        return first.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
