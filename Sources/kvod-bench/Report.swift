import Foundation

/// A server a report compares: ``Peer`` or ``ClusterPeer``.
protocol ReportPeer: Hashable { var displayName: String { get } }
extension Peer: ReportPeer {}
extension ClusterPeer: ReportPeer {}
/// A scenario a report measures: ``Scenario`` or ``ClusterScenario``.
protocol ReportScenario { var name: String { get }; var family: String { get } }
extension Scenario: ReportScenario {}
extension ClusterScenario: ReportScenario {}

/// `kvod-bench load`'s figures (kvod and Redis): renders the Markdown tables that docs/PERFORMANCE.md holds.
typealias Report = Measurements<Peer>

/// Every figure of a run, by row and peer, one value per round, with the
/// machine's 1-minute load average when each measurement started. Each row,
/// problem and note belongs to a scenario family, so that a section can show
/// only its own. ``Report`` and ``ClusterReport`` render it.
struct Measurements<P: ReportPeer> {
    private(set) var rows: [String] = []
    private(set) var units: [String: (unit: String, higherIsBetter: Bool)] = [:]
    /// Rows whose peers ran different loads: no ratio (``Figure/comparable``).
    private(set) var unalike: Set<String> = []
    private(set) var values: [String: [P: [Double]]] = [:]
    private var families: [String: String] = [:]
    private var problemsByFamily: [(family: String, text: String)] = []
    private var notesByFamily: [(family: String, text: String)] = []
    /// The 1-minute load average when each measurement started, per row and per family.
    private(set) var loads: [String: [Double]] = [:]
    private var loadAverages: [String: [Double]] = [:]

    var problems: [String] { problemsByFamily.map(\.text) }
    var notes: [String] { notesByFamily.map(\.text) }

    mutating func add(_ result: ScenarioResult, peer: P, scenario: some ReportScenario, round: Int, load: Double) {
        for figure in result.figures {
            if units[figure.row] == nil {
                rows.append(figure.row)
                units[figure.row] = (figure.unit, figure.higherIsBetter)
                families[figure.row] = scenario.family
            }
            if !figure.comparable { unalike.insert(figure.row) }
            values[figure.row, default: [:]][peer, default: []].append(figure.value)
            loads[figure.row, default: []].append(load)
        }
        let origin = "round \(round), \(scenario.name), \(peer.displayName): "
        problemsByFamily += result.problems.map { (scenario.family, origin + $0) }
        notesByFamily += result.notes.map { (scenario.family, origin + $0) }
    }

    /// Runs each scenario on each of its peers, `rounds` times, adding every
    /// result or failure and telling each on stderr. Who goes first alternates
    /// by round, so that a drift in the machine's load favours no peer.
    mutating func measure<S: ReportScenario>(rounds: Int, _ scenarios: [S], peers: (S) -> [P],
                                             _ run: (S, P) throws -> ScenarioResult) {
        for round in 1...rounds {
            for scenario in scenarios {
                let order = round % 2 == 1 ? peers(scenario) : peers(scenario).reversed()
                for peer in order {
                    let load = Machine.oneMinuteLoad()
                    loadAverages[scenario.family, default: []].append(load)
                    let origin = "round \(round)/\(rounds) \(scenario.name) \(peer.displayName) (load \(load))"
                    do {
                        let result = try run(scenario, peer)
                        add(result, peer: peer, scenario: scenario, round: round, load: load)
                        progress("\(origin): \(result.summary)")
                    } catch {
                        problemsByFamily.append((scenario.family, "round \(round), \(scenario.name), \(peer.displayName): \(error)"))
                        progress("\(origin): FAILED: \(error)")
                    }
                }
            }
        }
    }

    func rows(_ include: (String) -> Bool) -> [String] { rows.filter { include(families[$0] ?? "") } }
    func problems(_ include: (String) -> Bool) -> [String] { problemsByFamily.filter { include($0.family) }.map(\.text) }
    func notes(_ include: (String) -> Bool) -> [String] { notesByFamily.filter { include($0.family) }.map(\.text) }
    func loadAverages(_ include: (String) -> Bool) -> [Double] {
        loadAverages.filter { include($0.key) }.flatMap(\.value)
    }

    func median(_ row: String, _ peer: P) -> Double? {
        Self.median(values[row]?[peer] ?? [])
    }

    /// `peer`'s figure in `row` ÷ `basePeer`'s in `baseRow`: the median of the
    /// per-round ratios (0 ÷ 0 is 1). Each round measures both back to back, so
    /// a ratio compares them under the same load from the rest of the machine,
    /// which medians taken apart do not.
    func ratio(_ row: String, _ peer: P, over baseRow: String, _ basePeer: P) -> Double? {
        guard let mine = values[row]?[peer], let theirs = values[baseRow]?[basePeer], !mine.isEmpty,
              mine.count == theirs.count else {
            guard let mine = median(row, peer), let theirs = median(baseRow, basePeer), theirs > 0 else { return nil }
            return mine / theirs
        }
        return Self.median(zip(mine, theirs).map { $1 > 0 ? $0 / $1 : $0 > 0 ? .infinity : 1 })
    }

    static func median(_ list: [Double]) -> Double? {
        guard !list.isEmpty else { return nil }
        let sorted = list.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func number(_ value: Double) -> String {
        if value >= 100 { return Int(value.rounded()).formatted }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}

extension Report {
    /// kvod ÷ Redis in `row` (``ratio(_:_:over:_:)``).
    func ratio(_ row: String) -> Double? { ratio(row, .kvod, over: row, .redis) }

    /// The Markdown table: one row per figure of the families `include`
    /// accepts, medians and the ratio.
    func table(_ include: (String) -> Bool = { _ in true }) -> String {
        var lines = [
            "| scenario | unit | kvod (median) | Redis (median) | kvod ÷ Redis (median of rounds) | better | rounds (kvod; Redis) |",
            "|---|---|---:|---:|---:|---|---|",
        ]
        for row in rows(include) {
            let (unit, higher) = units[row]!
            let all = { (peer: Peer) in (values[row]?[peer] ?? []).map(Self.number).joined(separator: " ") }
            lines.append("| \(row) | \(unit) | \(median(row, .kvod).map(Self.number) ?? "–") | "
                + "\(median(row, .redis).map(Self.number) ?? "–") | \(ratio(row).map { String(format: "%.2f×", $0) } ?? "–") | "
                + "\(higher ? "higher" : "lower") | \(all(.kvod)); \(all(.redis)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// Figures with a target in issues 5 and 16, and whether this run meets it.
    func targets() -> String {
        let rows = rows { $0 != Scenario.durabilityFamily }
        var lines = ["| target | this run | met |", "|---|---|---|"]
        func add(_ what: String, _ row: String?, _ met: (Double) -> Bool, ratio useRatio: Bool = true) {
            guard let row, let value = useRatio ? ratio(row) : median(row, .kvod) else {
                lines.append("| \(what) | not measured | – |")
                return
            }
            let shown = useRatio ? String(format: "%.2f× Redis", value) : Self.number(value) + " B"
            lines.append("| \(what) | \(shown) | \(met(value) ? "yes" : "**no**") |")
        }
        add("set-throughput ≥ 1.0× Redis SET", rows.first { $0.hasPrefix("set-throughput") }, { $0 >= 1 })
        // Issue 16 item 3: each fan-out held back by lagging observers and flat out, full and compact events.
        for observers in [100, 1000] {
            for compact in [false, true] {
                let form = compact ? ", compact events" : ""
                let heldBack = rows.first { $0 == "fanout, \(observers) observers of one key\(form)" }.flatMap(ratio)
                let flatOut = rows.first { $0 == "fanout flat out, \(observers) observers\(form), events delivered" }
                    .flatMap(ratio)
                let what = "fanout, \(observers) observers\(form) ≥ 1.0× Redis PUBLISH, held back / flat out"
                guard let heldBack, let flatOut else {
                    lines.append("| \(what) | \(heldBack.map { String(format: "%.2f×", $0) } ?? "not measured") / "
                        + "\(flatOut.map { String(format: "%.2f×", $0) } ?? "not measured") | – |")
                    continue
                }
                lines.append("| \(what) | \(String(format: "%.2f× / %.2f×", heldBack, flatOut)) "
                    + "| \(heldBack >= 1 && flatOut >= 1 ? "yes" : "**no**") |")
            }
        }
        add("fanout p99 latency ≤ Redis's", rows.first { $0.hasPrefix("fanout latency") && $0.hasSuffix("p99") },
            { $0 <= 1 })
        add("≤ 256 B resident per observation", rows.first { $0.hasPrefix("memory") }, { $0 <= 256 }, ratio: false)
        // Issue 16: every client's spelling as fast as KVOClient's (kvod's own medians compared).
        let kvoclient = rows.first { $0.hasPrefix("set-throughput") }
        for shape in ClientShape.allCases where shape != .kvoclient {
            let row = rows.first { $0.hasPrefix("set-throughput") && $0.hasSuffix(shape.rowSuffix) }
            let what = "set-throughput, \(shape.label) ≥ 0.9× KVOClient's lines"
            guard let row, let kvoclient, let mine = median(row, .kvod), let theirs = median(kvoclient, .kvod) else {
                lines.append("| \(what) | not measured | – |")
                continue
            }
            let share = mine / theirs
            lines.append("| \(what) | \(String(format: "%.2f×", share)) (\(ratio(row).map { String(format: "%.2f× Redis", $0) } ?? "–")) "
                + "| \(share >= 0.9 ? "yes" : "**no**") |")
        }
        return lines.joined(separator: "\n")
    }

}

/// What the run ran on, for the report.
enum Machine {
    static func cpuModel() -> String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return model.map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) }
            ?? "unknown CPU"
    }

    static func memory() -> String {
        let info = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        guard let line = info.split(separator: "\n").first(where: { $0.hasPrefix("MemTotal:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return "?" }
        return String(format: "%.0f GiB", kilobytes / 1_048_576)
    }

    /// The 1-minute load average.
    static func oneMinuteLoad() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Double($0) } ?? 0
    }

    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The type of the filesystem `path` is on (`ext4`, `tmpfs`, …): the
    /// longest mount point in /proc/mounts that contains it.
    static func filesystemType(_ path: String) -> String {
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1])
            let contains = point == "/" || path == point || path.hasPrefix(point + "/")
            if contains, point.count >= (best?.point.count ?? -1) { best = (point, String(fields[2])) }
        }
        return best?.type ?? "unknown filesystem"
    }

    static func kernel() -> String {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "Linux \(release)"
    }

    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
}
