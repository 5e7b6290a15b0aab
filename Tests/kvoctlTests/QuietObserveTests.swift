import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// `kvoctl observe --distinct`, `--kinds` and `--throttle`: kvod applies
/// them, so what they exclude is never printed.
@Suite(.onDedicatedThread) struct QuietObserveTests {
    /// Starts `kvoctl observe ARGUMENTS` and returns once kvod holds its observation.
    private func observe(_ kvod: KVODProcess, _ arguments: [String]) async throws -> RunningCommand {
        let observe = try RunningCommand(KVOCtl.binaryURL, ["observe"] + arguments + ["--socket", kvod.socketPath])
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        try await waitUntil("kvod holds kvoctl's observation", timeout: 60) {
            try await connection.info().observations == 1
        }
        return observe
    }

    @Test func observeDistinctPrintsNothingForASetOfAnEqualValue() async throws {
        let kvod = try await KVODProcess()
        let observe = try await observe(kvod, ["sensor", "state", "--new", "--distinct", "--count", "2"])
        for value in ["ok", "ok", "failing"] {
            #expect(try await KVOCtl.run(kvod, ["set", "sensor", "state", value]).status == 0)
        }
        let run = try await observe.wait()
        #expect(run.status == 0, "\(run.stderr)")
        let prefix = #"{"event":"change","object":"sensor","keyPath":"state","kind":"setting","#
        #expect(run.lines == [prefix + #""new":"ok","seq":1}"#, prefix + #""new":"failing","seq":3}"#])
    }

    @Test func observeKindsPrintsOnlyThoseKinds() async throws {
        let kvod = try await KVODProcess()
        let observe = try await observe(kvod, ["queue", "jobs", "--kinds", "insertion,removal", "--count", "2"])
        #expect(try await KVOCtl.run(kvod, ["set", "queue", "jobs", #"["a"]"#]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["replace", "queue", "jobs", "0", "b"]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["insert", "queue", "jobs", "c"]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["remove", "queue", "jobs", "0"]).status == 0)
        let run = try await observe.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.map { $0.contains(#""kind":"insertion""#) } == [true, false])
        #expect(run.lines.map { $0.contains(#""kind":"removal""#) } == [false, true])
    }

    @Test func observeThrottlePrintsTheLatestValueWithCoalesced() async throws {
        let kvod = try await KVODProcess()
        let observe = try await observe(kvod, ["job/7", "done", "--new", "--throttle", "200ms", "--count", "2"])
        let connection = try KVOConnection(socketPath: kvod.socketPath)
        let result = try await connection.batch((1...50).map { .set("job/7", "done", to: .number(JSONNumber($0))) })
        let run = try await observe.wait()
        #expect(run.status == 0, "\(run.stderr)")
        let prefix = #"{"event":"change","object":"job/7","keyPath":"done","kind":"setting","#
        #expect(run.lines == [
            prefix + #""new":1,"seq":1}"#,
            prefix + #""new":50,"seq":\#(result.seq),"coalesced":48}"#,
        ])
    }

    @Test func observeRefusesAnUnknownKindAndAThrottleBeyondKvodsLimit() async throws {
        let kvod = try await KVODProcess()
        let kind = try await KVOCtl.run(kvod, ["observe", "o", "k", "--kinds", "insertion,moved"])
        #expect(kind.status == 2)
        #expect(kind.stderr.contains("--kinds takes setting, insertion, removal, replacement"), "\(kind.stderr)")
        let long = try await KVOCtl.run(kvod, ["observe", "o", "k", "--throttle", "2h"])
        #expect(long.status == 2)
        #expect(long.stderr.contains("--throttle must be from 1ms to 1h (3600000 ms"), "\(long.stderr)")
        let word = try await KVOCtl.run(kvod, ["observe", "o", "k", "--throttle", "soon"])
        #expect(word.status == 2)
    }

    @Test func observeTimeoutTakesAUnit() async throws {
        let kvod = try await KVODProcess()
        let short = try await KVOCtl.run(kvod, ["observe", "o", "k", "--initial", "--count", "2", "--timeout", "200ms"])
        #expect(short.status == 4)
        #expect(short.stderr == "kvoctl: timed out: 1 of 2 events within 200ms\n")
    }
}
