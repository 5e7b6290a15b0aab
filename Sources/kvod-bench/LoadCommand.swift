import ArgumentParser
import Foundation

/// `kvod-bench load`: starts kvod and Redis itself, each on its own Unix
/// socket, runs every scenario against both alternately for several rounds,
/// and prints (or writes into docs/PERFORMANCE.md) the medians and the
/// kvod ÷ Redis ratios. The durability scenario has a section of its own.
struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Measure kvod beside Redis on this machine: throughput, fan-out, latency, memory.",
        discussion: """
            Scenarios: set-throughput, fanout (with fanout-latency), fanout-flat-out (the setter never \
            waits for lagging observers), many-keys, memory, durability \
            (set throughput with kvod's --data-dir beside Redis's AOF). set-throughput and fanout run \
            with each client shape (--shape). See docs/PERFORMANCE.md.
            """)

    @OptionGroup var shared: SharedOptions

    @Option(help: "How many times each scenario runs per peer; medians are reported.")
    var rounds: Int = 5

    @Option(name: .customLong("scenario"), help: "Run only these scenarios (repeatable): set-throughput, fanout, fanout-flat-out, fanout-latency, many-keys, memory, durability.")
    var scenarios: [String] = []

    @Option(name: .customLong("shape"), help: "Run set-throughput and fanout only with these client shapes (repeatable): kvoclient ({\"op\":\"set\",…}, no id, no space), id-first ({\"id\":N,\"op\":…}, as typed into socat), json-dumps (Python's spacing, the id last). Default: all.")
    var shapes: [String] = []

    @Option(name: .customLong("observers"), help: "Run fanout and fanout-flat-out only with these observer counts (repeatable). Default: all.")
    var observerCounts: [Int] = []

    @Option(help: "fanout-latency's observers (default: the size's, 100 standard).")
    var latencyObservers: Int?

    @Option(help: "The measurement window of the unpaced scenarios, in seconds (default: the size's, 2 standard).")
    var seconds: Double?

    @Option(help: "Sets each fan-out setter keeps unanswered (default: the size's, 64 standard).")
    var fanoutPipeline: Int?

    @Option(help: "The most fanout-flat-out's observer thread reads from one connection at a time, in bytes (default 262144).")
    var readBytes: Int?

    @Option(help: "fanout-flat-out with the setter unbounded (off), held back while observers lag as fanout is (on), or both.")
    var lagBound: String = "off"

    @Option(help: "fanout and fanout-flat-out with kvod's observers asking for full events (off), compact events (on: {\"o\":N,…}), or both.")
    var compact: String = "both"

    @Option(name: .customLong("kvod-argument"), parsing: .unconditionalSingleValue,
            help: "Pass this argument to every kvod started (repeatable), e.g. --kvod-argument=--fanout-pause-microseconds=0.")
    var kvodArguments: [String] = []

    @Option(help: "Run only this peer: kvod or redis (default: both).")
    var peer: String?

    @Option(help: "The redis-server binary.")
    var redisServer: String = "/usr/bin/redis-server"

    @Option(help: "Use the server already listening on this socket instead of starting one (with --peer; for profiling it under valgrind or perf; not for durability, which starts each server with its data directory).")
    var attach: String?

    @Option(help: "Write the results into this Markdown file, between its kvod-bench markers.")
    var write: String?

    @Option(help: "The command line to record in the report.")
    var command: String = "kvod-bench"

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        let known = Set(Scenario.all(.standard).map(\.family))
        for name in scenarios where !known.contains(name) {
            throw ValidationError("unknown scenario \(name); known: \(known.sorted().joined(separator: ", "))")
        }
        for name in shapes where ClientShape(rawValue: name) == nil {
            throw ValidationError("unknown shape \(name); known: \(ClientShape.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let seconds, !(seconds > 0 && seconds <= 600) { throw ValidationError("--seconds must be above 0 and at most 600") }
        if let readBytes, !(512...(16 << 20)).contains(readBytes) { throw ValidationError("--read-bytes must be 512 to 16777216") }
        if let latencyObservers, latencyObservers < 1 { throw ValidationError("--latency-observers must be at least 1") }
        if let fanoutPipeline, fanoutPipeline < 1 { throw ValidationError("--fanout-pipeline must be at least 1") }
        guard ["off", "on", "both"].contains(lagBound) else { throw ValidationError("--lag-bound must be off, on or both") }
        guard ["off", "on", "both"].contains(compact) else { throw ValidationError("--compact must be off, on or both") }
        if let peer, !Peer.loadPeers.contains(where: { $0.rawValue == peer }) { throw ValidationError("--peer must be kvod or redis") }
        if attach != nil && peer == nil { throw ValidationError("--attach needs --peer") }
        if attach != nil && scenarios.contains(Scenario.durabilityFamily) {
            throw ValidationError("durability starts each server itself, with a fresh data directory: it cannot --attach")
        }
    }

    func run() throws {
        _ = UnixSocket.raiseFileLimit()
        var sizes = shared.size == "tiny" ? Sizes.tiny : Sizes.standard
        if let fanoutPipeline { sizes.fanoutPipeline = fanoutPipeline }
        if let seconds { sizes.durationSeconds = seconds }
        if let latencyObservers { sizes.latencyObservers = latencyObservers }
        if let readBytes { sizes.observerReadBytes = readBytes }
        let selected = Scenario.all(sizes).filter { scenario in
            // An attached server keeps its data however it was started: durability's pairs would be mislabelled.
            scenarios.isEmpty ? attach == nil || scenario.family != Scenario.durabilityFamily
                : scenarios.contains(scenario.family)
        }.filter { scenario in
            shapes.isEmpty || !["set-throughput", "fanout"].contains(scenario.family)
                || shapes.contains(scenario.shape.rawValue)
        }.filter { scenario in
            switch scenario {
            case .fanout(let observers, _, let isCompact):
                (observerCounts.isEmpty || observerCounts.contains(observers)) && (isCompact ? compact != "off" : compact != "on")
            case .fanoutFlatOut(let observers, let bound, let isCompact):
                (observerCounts.isEmpty || observerCounts.contains(observers)) && (bound ? lagBound != "off" : lagBound != "on")
                    && (isCompact ? compact != "off" : compact != "on")
            default: true
            }
        }
        let peers = peer.flatMap(Peer.init(rawValue:)).map { [$0] } ?? Peer.loadPeers
        let binaries = ServerProcess.Binaries(kvod: shared.kvod, redisServer: redisServer, kvodArguments: kvodArguments)
        let started = Date()
        let loadBefore = Machine.loadAverage()
        var report = Report()
        report.measure(rounds: rounds, selected, peers: { scenario in peers.filter(scenario.runs(on:)) }) { scenario, peer in
            let server = try attach.map { path throws(BenchError) in try ServerProcess(attachingTo: path, peer: peer) }
                ?? ServerProcess(peer, binaries: binaries, persistence: scenario.persistence)
            defer { server.stop() }
            return try scenario.run(on: server, sizes: sizes)
        }
        let seconds = Date().timeIntervalSince(started)
        let isDurability = { (family: String) in family == Scenario.durabilityFamily }
        let loadRan = selected.contains { !isDurability($0.family) }
        let durabilityRan = selected.contains { isDurability($0.family) }
        // The targets are about the standard sizes; a tiny run only proves that everything works.
        if loadRan {
            print("\n" + report.table { !isDurability($0) } + (shared.size == "standard" ? "\n\n" + report.targets() : ""))
        }
        let header = header(started: started, seconds: seconds, redis: ServerProcess.version(redisServer))
        let durability = DurabilitySection(report: report, sizes: sizes, header: header)
        if durabilityRan { print("\n" + report.table(isDurability) + "\n\n" + durability.keptTable()) }
        if let write {
            let document = PerformanceDocument(path: write)
            if loadRan {
                try document.replace(section: "load", with: section(report: report, header: header, loadBefore: loadBefore))
            }
            if durabilityRan { try document.replace(section: Scenario.durabilityFamily, with: durability.text) }
            print("\nwrote \(write)")
        }
        if !report.problems.isEmpty {
            print("\nPROBLEMS:\n" + report.problems.map { "- " + $0 }.joined(separator: "\n"))
            throw ExitCode(1)
        }
    }

    /// The run and machine lines that both sections start with.
    private func header(started: Date, seconds: Double, redis: String) -> String {
        let date = ISO8601DateFormatter().string(from: started)
        return """
        **Run:** `\(command)` on \(date), \(Int(seconds.rounded())) s, \(rounds) round(s) per peer, kvod \(shared.commit), \(redis).

        **Machine:** \(Machine.cpuModel()), \(Machine.cores) cores, \(Machine.memory()), \(Machine.kernel()).
        """
    }

    private func section(report: Report, header: String, loadBefore: String) -> String {
        let isLoad = { (family: String) in family != Scenario.durabilityFamily }
        return """
        \(header)
        Load average (1, 5, 15 min) before: \(loadBefore); after: \(Machine.loadAverage()).

        ### Targets (issues 5 and 16)

        \(report.targets())

        ### Figures

        \(report.table(isLoad))

        \(PerformanceDocument.problemsAndNotes(report.problems(isLoad), report.notes(isLoad)))
        """
    }
}
