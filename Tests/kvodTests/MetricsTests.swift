import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// The `metrics` op: kvod's figures as Prometheus text, read by Prometheus's
/// own parser, with the values that the test's requests caused.
@Suite(.onDedicatedThread) struct MetricsTests {
    private static func metrics(_ client: LineClient) throws -> PrometheusText {
        let reply = try client.request(#"{"op":"metrics","id":1}"#).reply
        guard reply["ok"] == true, case .string(let text)? = reply["text"] else {
            throw TestFailure("not a metrics reply: \(reply)")
        }
        return try PrometheusText(parsing: text)
    }

    @Test func metricsCountTheConnectionsObservationsSetsAndEventsTheTestMade() throws {
        let kvod = try KVODProcess()
        var observer: LineClient? = try LineClient(path: kvod.socketPath)
        #expect(try observer?.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
        let setter = try LineClient(path: kvod.socketPath)
        // Sets without an id take the engine's fast path; with one, the general one.
        for index in 1...5 { #expect(try setter.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(index)}"#).reply["ok"] == true) }
        for index in 6...7 {
            #expect(try setter.request(#"{"op":"set","id":\#(index),"object":"o","keyPath":"k","value":\#(index)}"#).reply["ok"] == true)
        }
        #expect(try setter.request("not json").reply["ok"] == false)

        let first = try Self.metrics(setter)
        #expect(first.types["kvod_requests"] == "counter")
        #expect(first.types["kvod_connections"] == "gauge")
        #expect(first.types["kvod_fsync_duration_seconds"] == "histogram")
        #expect(first.value("kvod_connections") == 2)
        // The two clients and KVODProcess's probe, which connected to see kvod ready.
        #expect(first.value("kvod_connections_accepted_total") == 3)
        #expect(first.value("kvod_observations") == 1)
        #expect(first.value("kvod_objects") == 1)
        #expect(first.value("kvod_seq") == 7)
        #expect(first.value("kvod_requests_total", ["op": "set"]) == 7)
        #expect(first.value("kvod_requests_total", ["op": "observe"]) == 1)
        // Each request's time in the loop, by op: every set once, in its buckets up to +Inf.
        #expect(first.types["kvod_request_duration_seconds"] == "histogram")
        #expect(first.value("kvod_request_duration_seconds_count", ["op": "set"]) == 7)
        #expect(first.value("kvod_request_duration_seconds_bucket", ["op": "set", "le": "+Inf"]) == 7)
        #expect((first.value("kvod_request_duration_seconds_sum", ["op": "set"]) ?? 0) > 0)
        #expect(first.value("kvod_request_duration_seconds_count", ["op": "observe"]) == 1)
        #expect(first.value("kvod_request_duration_seconds_count", ["op": "delete"]) == nil, "no delete was sent")
        #expect(first.value("kvod_requests_total", ["op": "get"]) == 0, "every op has its counter from the start")
        #expect(first.value("kvod_requests_total", ["op": "metrics"]) == 1, "the metrics request counts itself")
        #expect(first.value("kvod_invalid_requests_total") == 1)
        #expect(first.value("kvod_events_total", ["kind": "setting"]) == 7, "one event per set to the one observer")
        #expect(first.value("kvod_events_total", ["kind": "insertion"]) == 0)
        #expect(first.value("kvod_history_changes") == 7)
        #expect(first.value("kvod_history_oldest_seq") == 1)
        // The same figures as info's.
        let info = try setter.request(#"{"op":"info"}"#).reply
        #expect(first.value("kvod_history_bytes").map(Int.init) == info["memory"]?["history"]?.intValue)
        #expect((first.value("kvod_memory_bytes") ?? 0) > 0)
        #expect(first.value("kvod_fsync_duration_seconds_count") == 0, "in memory: nothing synced")
        for gauge in ["kvod_loop_lag_seconds", "kvod_loop_lag_max_seconds", "kvod_loop_lag_peak_seconds"] {
            #expect((first.value(gauge) ?? -1) >= 0, "\(gauge)")
        }
        // The observer got the 7 events the metrics counted.
        var events = 0
        try waitUntil("the observer has its 7 events", timeout: 10) {
            if (try? observer?.readJSON(timeout: 0.1))?["event"] != nil { events += 1 }
            return events == 7
        }

        // Counters grow by exactly what was done since; gauges follow.
        observer = nil
        for index in 8...10 { #expect(try setter.request(#"{"op":"set","object":"p","keyPath":"k","value":\#(index)}"#).reply["ok"] == true) }
        try waitUntil("the observer's connection is closed", timeout: 10) {
            try Self.metrics(setter).value("kvod_connections") == 1
        }
        let second = try Self.metrics(setter)
        #expect(second.value("kvod_connections_accepted_total") == 3)
        #expect(second.value("kvod_observations") == 0)
        #expect(second.value("kvod_objects") == 2)
        #expect(second.value("kvod_requests_total", ["op": "set"]) == 10)
        #expect(second.value("kvod_events_total", ["kind": "setting"]) == 7, "nobody observes p")
        #expect(second.value("kvod_seq") == 10)
        #expect(second.value("kvod_history_changes") == 10)
    }

    /// Issue 34 item 8: what an operator looks for first, each family with
    /// its `# HELP`: the version, uptime and the process, bytes in and out,
    /// loop turns as a histogram, the data directory's size.
    @Test func everyFamilyHasItsHelpAndTheProcessBytesTurnsAndDataDirectoryAreThere() throws {
        let data = try TemporaryDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        let value = String(repeating: "v", count: 10_000)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(value)"}"#).reply["ok"] == true)
        let metrics = try Self.metrics(client)
        let silent = metrics.types.keys.filter { (metrics.helps[$0] ?? "").isEmpty }
        #expect(silent.isEmpty, "families without # HELP: \(silent.sorted())")
        let version = try #require(metrics.samples.first { $0.name == "kvod_build_info" })
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(version.value == 1 && version.labels["version"] == info["version"]?.stringValue
                && version.labels["commit"] == info["commit"]?.stringValue, "\(version) beside info's")
        #expect((metrics.value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((metrics.value("process_open_fds") ?? 0) >= 3)
        #expect((metrics.value("process_start_time_seconds") ?? 0) > 1.7e9)
        #expect(metrics.value("kvod_uptime_seconds") != nil && metrics.value("process_cpu_seconds_total") != nil)
        #expect((metrics.value("kvod_received_bytes_total") ?? 0) >= 10_000, "the set's line was read")
        #expect((metrics.value("kvod_sent_bytes_total") ?? 0) > 0)
        #expect((metrics.value("kvod_loop_turn_duration_seconds_count") ?? 0) > 0)
        // The loop's turns are one series of ten buckets, the last one every turn.
        let turns = metrics.samples.filter { $0.name == "kvod_loop_turn_duration_seconds_bucket" }
        #expect(metrics.types["kvod_loop_turn_duration_seconds"] == "histogram")
        #expect(turns.map { $0.labels["le"] } == ["0.00005", "0.0002", "0.001", "0.005", "0.01", "0.025", "0.05",
                                                   "0.1", "0.5", "+Inf"], "\(turns)")
        #expect(turns.last?.value == metrics.value("kvod_loop_turn_duration_seconds_count"))
        #expect((metrics.value("kvod_data_dir_bytes") ?? 0) >= 10_000, "the value is in kvod.db or its WAL")
        #expect(metrics.value("kvod_cluster_stale") == nil, "no cluster without --etcd")
    }

    @Test func metricsTimeEachSyncWithADataDirectory() throws {
        let data = try TemporaryDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path, "--sync", "always"])
        let client = try LineClient(path: kvod.socketPath)
        for index in 1...3 { #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(index)}"#).reply["ok"] == true) }
        let metrics = try Self.metrics(client)
        // Each set was answered after its commit, so each was synced (maybe several in one commit).
        let count = try #require(metrics.value("kvod_fsync_duration_seconds_count"))
        #expect(count >= 1 && count <= 3, "\(count) syncs for 3 sets")
        #expect((metrics.value("kvod_fsync_duration_seconds_sum") ?? 0) > 0)
        #expect(metrics.value("kvod_fsync_duration_seconds_bucket", ["le": "+Inf"]) == count)
    }

    @Test func metricsShowWhatIsHeldCoalescedAndDroppedForAClientThatStopsReading() throws {
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "64k", "--output-soft-limit", "32k",
                                               "--output-soft-seconds", "1"])
        var stuck: LineClient? = try LineClient(path: kvod.socketPath)
        #expect(try stuck?.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
        let setter = try LineClient(path: kvod.socketPath)
        let value = String(repeating: "v", count: 10_000)
        // 10 KB events to a client that reads none: past the socket's buffer
        // and the output limit, later events replace the one held.
        var sets = 0
        try waitUntil("the stuck client's events are coalesced", timeout: 60) {
            for _ in 0..<50 {
                sets += 1
                _ = try setter.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(value)\#(sets)"}"#)
            }
            return (try Self.metrics(setter).value("kvod_events_coalesced_total") ?? 0) > 0
        }
        let held = try Self.metrics(setter)
        #expect(held.value("kvod_congested_connections") == 1)
        #expect(held.value("kvod_held_events") == 1, "one held event for the one observation")
        #expect((held.value("kvod_output_queued_bytes") ?? 0) >= 32_000, "the stuck client's queue")
        #expect(held.value("kvod_events_total", ["kind": "setting"]) == Double(sets))
        #expect(held.value("kvod_events_dropped_total") == 0)

        stuck = nil
        try waitUntil("the held event is dropped with its client", timeout: 10) {
            try Self.metrics(setter).value("kvod_events_dropped_total") == 1
        }
        let after = try Self.metrics(setter)
        #expect(after.value("kvod_held_events") == 0)
        #expect(after.value("kvod_congested_connections") == 0)
        #expect(after.value("kvod_output_queued_bytes") == 0)
    }
}
