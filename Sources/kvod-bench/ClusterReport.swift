/// `kvod-bench cluster`'s figures (kvod over etcd, etcd alone and local-mode
/// kvod): renders docs/PERFORMANCE.md's cluster tables.
typealias ClusterReport = Measurements<ClusterPeer>

extension ClusterReport {
    func table() -> String {
        var lines = [
            "| scenario | unit | kvod over etcd | etcd alone | kvod, local mode | kvod over etcd ÷ etcd | load (1 min): median, range | rounds (over etcd; etcd; local) |",
            "|---|---|---:|---:|---:|---:|---|---|",
        ]
        for row in rows {
            let unit = units[row]!.unit
            let cell = { (peer: ClusterPeer) in median(row, peer).map(Report.number) ?? "–" }
            let all = { (peer: ClusterPeer) in (values[row]?[peer] ?? []).map(Report.number).joined(separator: " ") }
            let load = loads[row] ?? []
            let loadText = Report.median(load).map {
                String(format: "%.1f, %.1f–%.1f", $0, load.min() ?? 0, load.max() ?? 0)
            } ?? "–"
            let ratioText = unalike.contains(row) ? "not alike"
                : ratio(row, .kvodOverEtcd, over: row, .etcd).map { String(format: "%.2f×", $0) } ?? "–"
            lines.append("| \(row) | \(unit) | \(cell(.kvodOverEtcd)) | \(cell(.etcd)) | \(cell(.kvodLocal)) | "
                + "\(ratioText) | \(loadText) | "
                + "\(all(.kvodOverEtcd)); \(all(.etcd)); \(all(.kvodLocal)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// Issue 18's two targets, issue 35's, and whether this run meets them.
    func targets() -> String {
        var lines = ["| target | this run | met |", "|---|---|---|"]
        // Not like for like: a kvod connection's 64 sets of one key fold into one document put and one
        // record; etcd's gateway client sends one put per request. The distinct-objects row compares alike.
        for row in rows where row.hasPrefix("set throughput") {
            let what = "kvod's set throughput ≥ 0.8× etcd's, same clients: " + row.prefix { $0 != "," }
                + " (not like for like: a kvod connection's 64 pipelined sets of its one key fold into one `Txn` "
                + "write, etcd's client puts one at a time)"
            lines.append("| \(what) | \(median(row, .kvodOverEtcd) == nil ? "not measured" : "not alike") | – |")
        }
        // Issue 35: each kvod change is two Txn operations (document and record) to etcd's one put.
        for row in rows where row.hasPrefix("distinct objects through") {
            let etcd = row.split(separator: "(").dropFirst().first?.prefix { $0 != ")" }.replacingOccurrences(of: "etcd: ", with: "") ?? ""
            let what = "\(row.prefix { $0 != "," }): kvod's sets ≥ 0.5× etcd's puts, etcd's as \(etcd) (issue 35)"
            guard let value = ratio(row, .kvodOverEtcd, over: row, .etcd) else {
                lines.append("| \(what) | not measured | – |")
                continue
            }
            lines.append("| \(what) | \(String(format: "%.2f×", value)) | \(value >= 0.5 ? "yes" : "**no**") |")
        }
        // "At local-mode speed": the fan-out's first-to-last spread within the machine's noise (±25 %) of local mode's.
        for row in rows where row.contains("first observer to its last") {
            let what = "a change fans out at local-mode speed (\(row.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) ≤ 1.25× local mode's)"
            guard let value = ratio(row, .kvodOverEtcd, over: row, .kvodLocal) else {
                lines.append("| \(what) | not measured | – |")
                continue
            }
            lines.append("| \(what) | \(String(format: "%.2f× local mode", value)) | \(value <= 1.25 ? "yes" : "**no**") |")
        }
        return lines.joined(separator: "\n")
    }
}
