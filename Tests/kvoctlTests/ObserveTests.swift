import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `kvoctl observe`: one JSON line per event, in pipelines.
@Suite(.onDedicatedThread) struct ObserveTests {
    /// Waits until the daemon holds `count` observations (kvoctl has registered).
    func waitForObservations(_ kvod: KVODProcess, _ count: Int) async throws {
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        try await waitUntil("kvod holds \(count) observations", timeout: 60) {
            try await connection.info().observations == count
        }
    }

    @Test func observeCountInAShellPipelineWithJq() async throws {
        let kvod = try await KVODProcess()
        let pipeline = try RunningCommand(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #""$KVOCTL" observe person/1 name --new --count 2 | jq -r .new"#],
            environment: ["KVOCTL": KVOCtl.binaryURL.path, "KVOD_SOCKET": kvod.socketPath])
        try await waitForObservations(kvod, 1)
        #expect(try await KVOCtl.run(kvod, ["set", "person/1", "name", "xsc"]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["set", "person/1", "name", #""x z""#]).status == 0)
        let run = try await pipeline.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "xsc\nx z\n")
    }

    @Test func observePrintsEveryOptionAsTheDaemonsEventShape() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "doc", "list", "[1]"])
        let observe = try RunningCommand(
            KVOCtl.binaryURL,
            ["observe", "doc", "list", "--new", "--old", "--initial", "--prior", "--count", "3",
             "--socket", kvod.socketPath])
        try await waitForObservations(kvod, 1)
        #expect(try await KVOCtl.run(kvod, ["insert", "doc", "list", "2"]).status == 0)
        let run = try await observe.wait()
        #expect(run.status == 0, "\(run.stderr)")
        let prefix = #"{"event":"change","object":"doc","keyPath":"list","kind":"#
        #expect(run.lines == [
            prefix + #""setting","initial":true,"new":[1],"seq":1}"#,
            prefix + #""insertion","prior":true,"indexes":[1],"seq":2}"#,
            prefix + #""insertion","new":[2],"indexes":[1],"seq":2}"#,
        ])
    }

    @Test func observeTimeoutExitsZeroAloneAndFourWithAReasonWhenTheCountIsNotReached() async throws {
        let kvod = try await KVODProcess()
        let quiet = try await KVOCtl.run(kvod, ["observe", "o", "k", "--timeout", "0.2"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        let short = try await KVOCtl.run(kvod, ["observe", "o", "k", "--initial", "--count", "2", "--timeout", "0.2"])
        #expect(short.status == 4)
        #expect(short.lines.count == 1, "the initial event was printed")
        #expect(short.stderr == "kvoctl: timed out: 1 of 2 events within 0.2 s\n")
    }

    @Test func observeOfAKilledDaemonExitsThree() async throws {
        let kvod = try await KVODProcess()
        let observe = try RunningCommand(KVOCtl.binaryURL, ["observe", "o", "k", "--socket", kvod.socketPath])
        try await waitForObservations(kvod, 1)
        try await kvod.kill()
        let run = try await observe.wait()
        #expect(run.status == 3)
        #expect(run.stderr.contains("connection_lost"), "\(run.stderr)")
    }

    @Test func observeSincePrintsTheMissedChangesThenLiveOnesAndCompactedExitsSix() async throws {
        let kvod = try await KVODProcess(arguments: ["--history", "3"])
        for value in 1...4 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let resumed = try RunningCommand(
            KVOCtl.binaryURL, ["observe", "o", "k", "--new", "--since", "2", "--count", "3", "--socket", kvod.socketPath])
        try await waitForObservations(kvod, 1)
        #expect(try await KVOCtl.run(kvod, ["set", "o", "k", "5"]).status == 0)
        let run = try await resumed.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.map { $0.contains(#""new":"#) } == [true, true, true])
        #expect(run.lines.map { line in line.split(separator: ",").first { $0.hasPrefix(#""seq":"#) } ?? "" }
            == [#""seq":3}"#, #""seq":4}"#, #""seq":5}"#])

        let compacted = try await KVOCtl.run(kvod, ["observe", "o", "k", "--since", "1", "--timeout", "5"])
        #expect(compacted.status == 6)
        #expect(compacted.stderr.contains("compacted"), "\(compacted.stderr)")
        #expect(try await KVOCtl.run(kvod, ["observe", "o", "k", "--since", "1", "--initial"]).status == 2)
    }
}
