import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// kvoctl's conditions, `get --mod-seq`, `--ttl` and `batch`, against the real kvod.
@Suite(.onDedicatedThread) struct AtomicCommandTests {
    @Test func getModSeqPrintsTheModSeqThenTheValueAndConditionsExitWith5() async throws {
        let kvod = try await KVODProcess()
        #expect(try await KVOCtl.run(kvod, ["set", "--if-mod-seq", "0", "counter", "n", "41"]).stdout == "1\n")
        let read = try await KVOCtl.run(kvod, ["get", "--mod-seq", "counter", "n"])
        #expect(read.status == 0 && read.stdout == "1 41\n", "\(read)")

        let stale = try await KVOCtl.run(kvod, ["set", "--if-mod-seq", "0", "counter", "n", "42"])
        #expect(stale.status == 5 && stale.stdout.isEmpty, "\(stale)")
        #expect(stale.stderr == "kvoctl: precondition_failed: counter n has modSeq 1, not 0\n")
        let wrongValue = try await KVOCtl.run(kvod, ["delete", "counter", "n", "--if-value", "40"])
        #expect(wrongValue.status == 5, "\(wrongValue)")
        let insert = try await KVOCtl.run(kvod, ["insert", "counter", "list", "a", "--if-mod-seq", "0"])
        #expect(insert.status == 0, "\(insert)")
        let remove = try await KVOCtl.run(kvod, ["remove", "counter", "list", "0", "--if-value", #"["b"]"#])
        #expect(remove.status == 5, "\(remove)")
        let replace = try await KVOCtl.run(kvod, ["replace", "counter", "list", "0", "z", "--if-value", #"["a"]"#])
        #expect(replace.status == 0, "\(replace)")
        #expect(try await KVOCtl.run(kvod, ["delete", "counter", "n", "--if-value", "41"]).status == 0)
        #expect(try await KVOCtl.run(kvod, ["get", "counter"]).stdout == #"{"list":["z"]}"# + "\n")

        let badCondition = try await KVOCtl.run(kvod, ["set", "--if-value", "{oops", "counter", "n", "1"])
        #expect(badCondition.status == 2 && badCondition.stderr.contains("not valid JSON"), "\(badCondition)")
    }

    @Test func ttlIsCheckedAndShownInGetsReply() async throws {
        let kvod = try await KVODProcess()
        for bad in ["0", "-1", "31536001", "soon"] {
            let run = try await KVOCtl.run(kvod, ["set", "--ttl", bad, "s", "k", "1"])
            #expect(run.status == 2, "--ttl \(bad): \(run)")
        }
        #expect(try await KVOCtl.run(kvod, ["set", "--ttl", "90", "s", "k", "1"]).status == 0)
        let raw = try await KVOCtl.run(kvod, ["raw"], stdin: #"{"op":"get","object":"s","keyPath":"k"}"# + "\n")
        // Seconds left, rounded up: 90 at once, less when the machine (or a sanitizer) is slow.
        let left = try #require(raw.stdout.firstRange(of: #""expiresIn":"#).map { range in
            Int(raw.stdout[range.upperBound...].prefix { $0.isNumber })
        } ?? nil, "\(raw)")
        #expect((80...90).contains(left), "\(raw)")
    }

    @Test func batchAppliesEveryLineOrNoneAndRefusesLinesThatAreNotChangeOps() async throws {
        let kvod = try await KVODProcess()
        let ops = """
            {"op":"set","object":"q/pending","keyPath":"job","value":1}

            {"op":"insert","object":"q/log","keyPath":"lines","value":"queued"}
            """
        let applied = try await KVOCtl.run(kvod, ["batch"], stdin: ops + "\n")
        #expect(applied.status == 0 && applied.stdout == "2\n", "\(applied)")

        let failing = #"{"op":"delete","object":"q/pending"}"# + "\n"
            + #"{"op":"remove","object":"q/log","keyPath":"lines","index":5}"# + "\n"
        let refused = try await KVOCtl.run(kvod, ["batch"], stdin: failing)
        #expect(refused.status == 1 && refused.stderr.contains("ops[1]"), "\(refused)")
        #expect(try await KVOCtl.run(kvod, ["get", "q/pending", "job"]).stdout == "1\n", "nothing applied")

        for (input, complaint) in [(#"{"op":"get","object":"q/pending"}"#, "line 1"), ("not json", "line 1"),
                                   ("", "no ops")] {
            let run = try await KVOCtl.run(kvod, ["batch"], stdin: input + "\n")
            #expect(run.status == 2 && run.stderr.contains(complaint) && !run.stderr.contains("Usage"), "\(run)")
        }
        #expect(try await KVOClient.KVOConnection(socketPath: kvod.socketPath).info().seq == 2)
    }
}
