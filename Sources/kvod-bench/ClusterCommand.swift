import ArgumentParser
import Foundation

/// `kvod-bench cluster`: issue 18's benchmark. Starts a real 3-member etcd
/// cluster on loopback for each measurement, and kvods over it, and measures
/// set-to-event latency across hosts, set throughput through one host and
/// three, and fan-out over three hosts, beside etcd itself through its JSON
/// gateway and beside a local-mode kvod; the peers alternate round by round.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Measure kvod over etcd beside etcd itself and beside local-mode kvod (issue 18).",
        discussion: """
            Scenarios: cluster-latency, cluster-set-throughput (through 1 host and through 3), \
            cluster-distinct-objects (etcd: Txns of many puts), cluster-many-writers, cluster-fanout. Each measurement starts its own etcd cluster (Debian's etcd) and kvods on \
            loopback and stops them after it. See docs/PERFORMANCE.md, "kvod over etcd (issue 18)".
            """)

    @OptionGroup var shared: SharedOptions

    @Option(help: "How many times each scenario runs per peer; medians are reported.")
    var rounds: Int = 3

    @Option(name: .customLong("scenario"), help: "Run only these scenarios (repeatable): cluster-latency, cluster-set-throughput, cluster-distinct-objects, cluster-many-writers, cluster-fanout.")
    var scenarios: [String] = []

    @Option(help: "The etcd binary (Debian's etcd-server).")
    var etcd: String = "/usr/bin/etcd"

    @Option(help: "Write the results into this Markdown file, between its kvod-bench:cluster markers.")
    var write: String?

    @Option(help: "The command line to record in the report.")
    var command: String = "kvod-bench cluster"

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        let known = Set(ClusterScenario.all.map(\.family))
        for name in scenarios where !known.contains(name) {
            throw ValidationError("unknown scenario \(name); known: \(known.sorted().joined(separator: ", "))")
        }
        guard FileManager.default.isExecutableFile(atPath: etcd) else {
            throw ValidationError("no etcd at \(etcd) (apt-get install etcd-server, or --etcd PATH)")
        }
    }

    func run() throws {
        _ = UnixSocket.raiseFileLimit()
        let selected = ClusterScenario.all.filter { scenarios.isEmpty || scenarios.contains($0.family) }
        let binaries = ClusterRig.Binaries(kvod: shared.kvod, etcd: etcd)
        let started = Date()
        let loadBefore = Machine.loadAverage()
        var report = ClusterReport()
        report.measure(rounds: rounds, selected, peers: \.peers) { scenario, peer in
            let rig = try ClusterRig(peer, hosts: scenario.hosts, members: sizes.members, binaries: binaries)
            defer { rig.stop() }
            return try scenario.run(on: rig, sizes: sizes)
        }
        let seconds = Date().timeIntervalSince(started)
        print("\n" + report.table() + (shared.size == "standard" ? "\n\n" + report.targets() : ""))
        if let write {
            try PerformanceDocument(path: write).replace(
                section: "cluster", with: section(report, started: started, seconds: seconds, loadBefore: loadBefore))
            print("\nwrote \(write)")
        }
        if !report.problems.isEmpty {
            print("\nPROBLEMS:\n" + report.problems.map { "- " + $0 }.joined(separator: "\n"))
            throw ExitCode(1)
        }
    }

    private func section(_ report: ClusterReport, started: Date, seconds: Double, loadBefore: String) -> String {
        let date = ISO8601DateFormatter().string(from: started)
        return """
        **Run:** `\(command)` on \(date), \(Int(seconds.rounded())) s, \(rounds) round(s) per peer, kvod \(shared.commit), \
        etcd \(ServerProcess.version(etcd).replacingOccurrences(of: "etcd Version: ", with: "")), \(sizes.members) members with their data on \
        \(Machine.filesystemType(ServerProcess.parentDirectory)).

        **Machine:** \(Machine.cpuModel()), \(Machine.cores) cores, \(Machine.memory()), \(Machine.kernel()).
        Load average (1, 5, 15 min) before: \(loadBefore); after: \(Machine.loadAverage()).

        ### Targets of issues 18 and 35

        \(report.targets())

        ### Figures over etcd

        \(report.table())

        \(PerformanceDocument.problemsAndNotes(report.problems, report.notes))
        """
    }

    private var sizes: ClusterSizes { shared.size == "tiny" ? .tiny : .standard }
}
