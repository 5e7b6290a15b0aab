import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `kvoctl set --await` (and the other write commands) with `kvoctl observe
/// --ack` agents: the roll-out barrier of docs/RECIPES.md, and its exit status 7.
@Suite(.onDedicatedThread) struct AwaitCommandTests {
    /// Waits until kvod holds `count` observations.
    private func waitForObservations(_ kvod: KVODProcess, _ count: Int) async throws {
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        try await waitUntil("kvod holds \(count) observations", timeout: 60) {
            try await connection.info().observations == count
        }
    }

    @Test func setAwaitAcknowledgedReturnsOnceEveryObserveAckHasPrintedTheChange() async throws {
        let kvod = try await KVODProcess()
        let agents = try (0..<2).map { _ in
            try RunningCommand(KVOCtl.binaryURL, ["observe", "config", "version", "--new", "--ack", "--count", "1",
                                                  "--socket", kvod.socketPath])
        }
        try await waitForObservations(kvod, 2)
        let set = try await KVOCtl.run(kvod, ["set", "--await", "acknowledged", "--timeout", "20s",
                                              "config", "version", "42"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == #"{"seq":1,"observers":2,"acknowledged":2}"# + "\n")
        for agent in agents {
            let run = try await agent.wait()
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.lines == [#"{"event":"change","object":"config","keyPath":"version","kind":"setting","new":42,"seq":1}"#])
        }
    }

    @Test func anAwaitThatTimesOutPrintsTheCountsAndExitsSeven() async throws {
        let kvod = try await KVODProcess()
        // An agent that never acknowledges: its stream is never consumed.
        let agent = try KVOConnection(socketPath: kvod.socketPath)
        let silent = agent.changes(of: "config", keyPath: "version", delivery: DeliveryOptions(acknowledges: true))
        try await waitForObservations(kvod, 1)
        let set = try await KVOCtl.run(kvod, ["set", "--await", "acknowledged", "--timeout", "200ms",
                                              "config", "version", "42"])
        #expect(set.status == 7)
        #expect(set.stdout == #"{"seq":1,"observers":1,"acknowledged":0}"# + "\n")
        #expect(set.stderr.hasPrefix("kvoctl: timeout: "), "\(set.stderr)")
        #expect(try await KVOCtl.run(kvod, ["get", "config", "version"]).stdout == "42\n", "the change is applied")
        let quiet = try await KVOCtl.run(kvod, ["delete", "--quiet", "--await", "acknowledged", "--timeout", "100ms",
                                                "config", "version"])
        #expect(quiet.status == 7 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        _ = silent
    }

    @Test func everyWriteCommandTakesAwaitAndTimeoutNeedsIt() async throws {
        let kvod = try await KVODProcess()
        let observe = try RunningCommand(KVOCtl.binaryURL, ["observe", "queue", "jobs", "--socket", kvod.socketPath])
        try await waitForObservations(kvod, 1)
        let insert = try await KVOCtl.run(kvod, ["insert", "--await", "written", "queue", "jobs", "a", "b"])
        #expect(insert.stdout == #"{"seq":1,"observers":1,"acknowledged":1}"# + "\n", "\(insert.stderr)")
        let replace = try await KVOCtl.run(kvod, ["replace", "--await", "written", "queue", "jobs", "0", "z"])
        #expect(replace.stdout == #"{"seq":2,"observers":1,"acknowledged":1}"# + "\n", "\(replace.stderr)")
        let remove = try await KVOCtl.run(kvod, ["remove", "--await", "acknowledged", "queue", "jobs", "0"])
        #expect(remove.stdout == #"{"seq":3,"observers":0,"acknowledged":0}"# + "\n", "no observer acknowledges")
        let batch = try await KVOCtl.run(kvod, ["batch", "--await", "written"],
                                         stdin: #"{"op":"delete","object":"queue","keyPath":"jobs"}"# + "\n")
        #expect(batch.stdout == #"{"seq":4,"observers":1,"acknowledged":1}"# + "\n", "\(batch.stderr)")
        let plain = try await KVOCtl.run(kvod, ["set", "queue", "n", "1"])
        #expect(plain.stdout == "5\n", "without --await, the seq alone")

        let alone = try await KVOCtl.run(kvod, ["set", "--timeout", "5s", "queue", "n", "2"])
        #expect(alone.status == 2 && alone.stderr.contains("--timeout goes with --await"), "\(alone.stderr)")
        let long = try await KVOCtl.run(kvod, ["set", "--await", "written", "--timeout", "2h", "queue", "n", "2"])
        #expect(long.status == 2 && long.stderr.contains("3600000 ms"), "\(long.stderr)")
        #expect(try await KVOCtl.run(kvod, ["get", "queue", "n"]).stdout == "1\n", "refused usage changes nothing")
        _ = observe
    }
}
