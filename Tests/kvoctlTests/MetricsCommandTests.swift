import Foundation
import KVOTestSupport
import Testing

/// `kvoctl metrics`: kvod's Prometheus text, printed as it came.
@Suite struct MetricsCommandTests {
    @Test func metricsPrintsPrometheusTextThatCountsTheSetsMade() throws {
        let kvod = try KVODProcess()
        #expect(try KVOCtl.run(kvod, ["set", "o", "a", "1"]).status == 0)
        #expect(try KVOCtl.run(kvod, ["set", "o", "b", "2"]).status == 0)
        let run = try KVOCtl.run(kvod, ["metrics"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        // The text itself, not a JSON reply: what node_exporter's textfile collector reads.
        #expect(run.stdout.hasPrefix("# HELP "), "\(run.stdout.prefix(200))")
        #expect(run.stdout.hasSuffix("\n") && !run.stdout.hasSuffix("\n\n"))
        let metrics = try PrometheusText(parsing: run.stdout)
        #expect(metrics.value("kvod_requests_total", ["op": "set"]) == 2)
        #expect(metrics.value("kvod_connections") == 1, "kvoctl's own connection")
        // Three kvoctl runs and KVODProcess's probe, which connected to see kvod ready.
        #expect(metrics.value("kvod_connections_accepted_total") == 4)
        #expect(metrics.value("kvod_objects") == 1)
        #expect(metrics.value("kvod_seq") == 2)
    }
}
