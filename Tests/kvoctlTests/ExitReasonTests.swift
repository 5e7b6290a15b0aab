import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Every non-zero exit says why on one line of standard error, unless
/// `--quiet`; and the options every command shares go before or after its name.
@Suite(.onDedicatedThread) struct ExitReasonTests {
    @Test func everyFailureStatusComesWithOneLineThatSaysWhyAndQuietLeavesItOut() async throws {
        let kvod = try await KVODProcess(arguments: ["--history", "1"])
        for value in 1...3 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let epoch = try #require(try await KVOConnection(socketPath: kvod.socketPath).info().epoch)
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(arguments: [String], stdin: String?, status: Int32, reason: String)] = [
            (["get", "o", "missing"], nil, 8, "kvoctl: not_found: o has no value at missing"),
            (["set", "o", "k.", "1"], nil, 10, "kvoctl: bad_request: "),
            (["insert", "o", "k", "1"], nil, 1, "kvoctl: not_an_array: "),
            (["raw"], #"{"op":"get","object":"none"}"# + "\n" + #"{"op":"ping"}"# + "\n", 1,
             "kvoctl: 1 of 2 replies were errors"),
            (["observe", "o", "k", "--count", "2", "--timeout", "0.1"], nil, 4,
             "kvoctl: timed out: 0 of 2 events within 0.1 s"),
            (["set", "o", "k", "4", "--if-mod-seq", "1"], nil, 5, "kvoctl: precondition_failed: o k has modSeq 3, not 1"),
            (["observe", "o", "k", "--since", "\(epoch):1", "--count", "1"], nil, 6, "kvoctl: compacted: "),
        ]
        for (arguments, stdin, status, reason) in cases {
            let run = try await KVOCtl.run(kvod, arguments, stdin: stdin)
            #expect(run.status == status, "\(arguments): \(run)")
            #expect(run.stderr.hasPrefix(reason) && run.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(run)")
            let quiet = try await KVOCtl.run(kvod, arguments + ["--quiet"], stdin: stdin)
            #expect(quiet.status == status && quiet.stderr.isEmpty, "\(arguments) --quiet: \(quiet)")
        }
        let unreachable = ["--socket", directory + "/none.sock", "ping"]
        let noDaemon = try await KVOCtl.run(unreachable)
        #expect(noDaemon.status == 3 && noDaemon.stderr.hasPrefix("kvoctl: cannot_connect: "), "\(noDaemon)")
        let quietly = try await KVOCtl.run(["--quiet"] + unreachable)
        #expect(quietly.status == 3 && quietly.stderr.isEmpty, "\(quietly)")
        let usage = try await KVOCtl.run(kvod, ["get", "--quiet"])
        #expect(usage.status == 2 && usage.stderr.contains("Missing expected argument"), "usage errors always say why")
    }

    @Test func socketAndQuietGoBeforeOrAfterTheCommandName() async throws {
        let kvod = try await KVODProcess()
        let before = try await KVOCtl.run(["--socket", kvod.socketPath, "ping"])
        #expect(before.status == 0 && before.stdout == "ok\n", "\(before)")
        let after = try await KVOCtl.run(["ping", "--socket", kvod.socketPath])
        #expect(after.status == 0 && after.stdout == "ok\n", "\(after)")
        let quietBefore = try await KVOCtl.run(["--quiet", "--socket", kvod.socketPath, "get", "o"])
        #expect(quietBefore.status == 8 && quietBefore.stderr.isEmpty, "\(quietBefore)")
        let help = try await KVOCtl.run(["--help"])
        #expect(help.stdout.contains("--socket") && help.stdout.contains("--quiet"), "\(help)")
    }
}
