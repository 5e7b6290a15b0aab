import Foundation

/// Prometheus text read by Prometheus's own Python client
/// (`prometheus_client.parser`, Debian's python3-prometheus-client), not
/// by a parser of ours: text it rejects fails the test.
public struct PrometheusText: Sendable {
    /// One sample: its name (`_total`, `_bucket`… included), labels and value.
    public struct Sample: Sendable {
        public let name: String
        public let labels: [String: String]
        public let value: Double
    }

    /// Each family's name (as the parser names it: a counter's without
    /// `_total`) and type.
    public let types: [String: String]
    /// Each family's `# HELP` text ("" without one).
    public let helps: [String: String]
    public let samples: [Sample]

    private static let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        families = list(text_string_to_metric_families(sys.stdin.read()))
        print(json.dumps({
            "types": {f.name: f.type for f in families},
            "helps": {f.name: f.documentation for f in families},
            "samples": [[s.name, s.labels, s.value] for f in families for s in f.samples],
        }))
        """

    /// Parses `text`; throws what the parser said when it rejects it.
    public init(parsing text: String) throws {
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.script], stdin: text)
        guard run.status == 0 else { throw TestFailure("prometheus_client rejected the text: \(run.stderr)\n\(text)") }
        guard let parsed = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
              let types = parsed["types"] as? [String: String], let helps = parsed["helps"] as? [String: String],
              let samples = parsed["samples"] as? [[Any]] else {
            throw TestFailure("unexpected parser output: \(run.stdout)")
        }
        self.types = types
        self.helps = helps
        self.samples = try samples.map { sample in
            guard sample.count == 3, let name = sample[0] as? String, let labels = sample[1] as? [String: String],
                  let value = (sample[2] as? NSNumber)?.doubleValue else {
                throw TestFailure("unexpected sample: \(sample)")
            }
            return Sample(name: name, labels: labels, value: value)
        }
    }

    /// The value of the sample named `name` with exactly `labels`; nil when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }
}
