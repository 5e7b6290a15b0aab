import Foundation
import KVOTestSupport
import Testing

/// `kvoctl incr OBJECT KEYPATH [BY]` (kvod's `add`) against the real kvod:
/// it prints the sum, and each failure exits with its own status.
@Suite(.onDedicatedThread) struct IncrCommandTests {
    @Test func incrPrintsTheSumAndNothingThereCountsAsZero() async throws {
        let kvod = try await KVODProcess()
        for (arguments, printed) in [
            (["incr", "stats/web", "hits"], "1"), (["incr", "stats/web", "hits", "41"], "42"),
            (["incr", "stats/web", "hits", "-50"], "-8"), (["incr", "--raw", "stats/web", "hits"], "-7"),
            (["incr", "stats/web", "hits", "-3"], "-10"), (["incr", "--if-mod-seq", "5", "stats/web", "hits"], "-9"),
        ] {
            let run = try await KVOCtl.run(kvod, arguments)
            #expect(run.status == 0 && run.stdout == printed + "\n" && run.stderr.isEmpty, "\(arguments): \(run)")
        }
        let read = try await KVOCtl.run(kvod, ["get", "--mod-seq", "stats/web"])
        #expect(read.stdout == #"6 {"hits":-9}"# + "\n", "\(read)")
    }

    @Test func eachFailureExitsWithItsStatusAndQuietLeavesOutTheLine() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "c", "name", "web"])
        _ = try await KVOCtl.run(kvod, ["incr", "c", "n", "9007199254740992"])
        for (arguments, status, reason) in [
            (["incr", "c", "name"], Int32(10), "kvoctl: bad_request: c name is string, not a number; nothing changed"),
            (["incr", "c", "n"], 10, "kvoctl: bad_request: c n would be 9007199254740993 (9007199254740992 + 1)"),
            (["incr", "c", "m", "9007199254740993"], 10, #"kvoctl: bad_request: field "by" must be an integer"#),
            (["incr", "--if-mod-seq", "0", "c", "n", "-1"], 5, "kvoctl: precondition_failed: c n has modSeq 2, not 0"),
        ] {
            let run = try await KVOCtl.run(kvod, arguments)
            #expect(run.status == status && run.stdout.isEmpty && run.stderr.hasPrefix(reason), "\(arguments): \(run)")
            let quiet = try await KVOCtl.run(kvod, ["--quiet"] + arguments)
            #expect(quiet.status == status && quiet.stderr.isEmpty, "\(arguments) --quiet: \(quiet)")
        }
        // The command line's own mistakes are usage errors, printed even with --quiet.
        let mistakes = [["incr", "c"], ["incr", "c", "n", "1.5"], ["incr", "c", "n", "one"],
                        ["incr", "c", "n", "1", "2"], ["incr", "c", "n", "--by", "2"], ["incr", "--ttl", "0", "c", "n"]]
        for arguments in mistakes {
            let run = try await KVOCtl.run(kvod, ["--quiet"] + arguments)
            #expect(run.status == 2 && !run.stderr.isEmpty, "\(arguments): \(run)")
        }
        let unchanged = try await KVOCtl.run(kvod, ["get", "c"])
        #expect(unchanged.stdout == #"{"name":"web","n":9007199254740992}"# + "\n", "\(unchanged)")
    }

    @Test func awaitPrintsTheCountsAndTtlGivesTheSumADeadline() async throws {
        let kvod = try await KVODProcess()
        let waited = try await KVOCtl.run(kvod, ["incr", "--await", "written", "c", "n", "3"])
        #expect(waited.status == 0 && waited.stdout == #"{"seq":1,"observers":0,"acknowledged":0}"# + "\n", "\(waited)")
        #expect(try await KVOCtl.run(kvod, ["incr", "--ttl", "90s", "c", "n"]).stdout == "4\n")
        let raw = try await KVOCtl.run(kvod, ["raw"], stdin: #"{"op":"get","object":"c","keyPath":"n"}"# + "\n")
        #expect(raw.stdout.contains(#""value":4"#) && raw.stdout.contains(#""expiresIn":"#), "\(raw)")
    }

    @Test func incrIsInTheHelpAndInABatch() async throws {
        let kvod = try await KVODProcess()
        let help = try await KVOCtl.run(["--help"])
        #expect(help.stdout.contains("incr"), "\(help)")
        let ops = #"{"op":"add","object":"q","keyPath":"next","by":7}"# + "\n"
            + #"{"op":"insert","object":"q","keyPath":"jobs","value":"backup"}"# + "\n"
        let batch = try await KVOCtl.run(kvod, ["batch"], stdin: ops)
        #expect(batch.status == 0 && batch.stdout == "2\n", "\(batch)")
        #expect(try await KVOCtl.run(kvod, ["get", "q", "next"]).stdout == "7\n")
    }
}
