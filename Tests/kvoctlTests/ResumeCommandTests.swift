import Foundation
import KVOClient
import KVOTestSupport
import Testing

/// Resuming from a shell: `--since EPOCH:SEQ`, `--print-resume`, `info`'s
/// resume point, and `observe --resume-file` run in a loop across restarts of kvod.
@Suite(.onDedicatedThread) struct ResumeCommandTests {
    /// One printed event: its epoch and seq (from `resume`), value, and whether it is initial.
    struct Printed: Equatable, CustomStringConvertible {
        var epoch: String
        var seq: Int
        var new: Int?
        var isInitial: Bool
        var description: String { "\(isInitial ? "initial " : "")\(epoch):\(seq)=\(new.map(String.init) ?? "-")" }

        init(_ line: String) throws {
            let members = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let resume = try #require(members["resume"] as? String, "\(line)").split(separator: ":")
            try #require(resume.count == 2, "resume is EPOCH:SEQ: \(line)")
            epoch = String(resume[0])
            seq = try #require(members["seq"] as? Int)
            #expect(String(resume[1]) == String(seq), "resume names the event's own seq: \(line)")
            new = members["new"] as? Int
            isInitial = members["initial"] as? Bool ?? false
        }
    }

    /// The values a writer set, by epoch and seq.
    struct Written {
        var epochs: [String] = []
        var values: [String: [Int: Int]] = [:]
        var last = 0

        /// The value `o.k` held at `seq` in `epoch`: the latest set at or before it.
        func value(in epoch: String, at seq: Int) -> Int? {
            values[epoch]?.filter { $0.key <= seq }.max { $0.key < $1.key }?.value
        }
    }

    /// Sets `o.k` to the next `count` values through a connection of its own; records each seq.
    func write(_ count: Int, to socketPath: String, _ written: inout Written) async throws {
        let connection = try KVOConnection(socketPath: socketPath)
        defer { connection.close() }
        let epoch = try #require(try await connection.info().epoch)
        if written.epochs.last != epoch { written.epochs.append(epoch) }
        for _ in 0..<count {
            written.last += 1
            let seq = try await connection.set("o", "k", to: written.last)
            written.values[epoch, default: [:]][Int(seq)] = written.last
        }
    }

    /// A script that runs `kvoctl observe --resume-file` again whenever it exits, as an
    /// operator's loop would, until `stop` exists; it ends at once on status 6.
    func resumingLoop(_ socketPath: String, in directory: String) throws -> RunningCommand {
        let script = """
            while [ ! -e "$DIR/stop" ]; do
              "$KVOCTL" observe o k --new --print-resume --resync --resume-file "$DIR/o.k.resume" --socket "$SOCK"
              [ $? = 6 ] && exit 6
              sleep 0.05
            done
            """
        return try RunningCommand(URL(fileURLWithPath: "/bin/sh"), ["-c", script],
                                  environment: ["KVOCTL": KVOCtl.binaryURL.path, "DIR": directory, "SOCK": socketPath])
    }

    /// Three times: kill kvod while the loop's kvoctl is behind, restart it, write while kvoctl
    /// reconnects, and wait until it has caught up. Returns what was printed and what was written.
    func runThroughRestarts(durable: Bool) async throws -> (printed: [Printed], written: Written, stderr: String) {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/kvod.sock"
        let arguments = durable ? ["--data-dir", directory + "/data"] : []
        var kvod = try await KVODProcess(arguments: arguments, socketPath: socketPath)
        var written = Written()
        let loop = try resumingLoop(socketPath, in: directory)
        try await waitUntil("the loop's kvoctl has written its first resume point", timeout: 20) { () async -> Bool in
            FileManager.default.fileExists(atPath: directory + "/o.k.resume")
        }
        for _ in 0..<3 {
            try await write(5, to: socketPath, &written)
            let caughtUp = written.last
            try await waitUntil("kvoctl printed \(caughtUp)", timeout: 20) { () async -> Bool in
                loop.linesSoFar.last?.contains(#""new":\#(caughtUp),"#) == true
            }
            try await write(5, to: socketPath, &written)  // some of these may not be printed before the kill
            try await kvod.kill()
            kvod = try await KVODProcess(arguments: arguments, socketPath: socketPath)
            try await write(3, to: socketPath, &written)  // while kvoctl reconnects
        }
        let last = written.last
        try await waitUntil("kvoctl printed the last value, \(last)", timeout: 20) { () async -> Bool in
            loop.linesSoFar.last?.contains(#""new":\#(last),"#) == true
        }
        #expect(FileManager.default.createFile(atPath: directory + "/stop", contents: nil))
        try await kvod.terminate()
        let run = try await loop.wait()
        #expect(run.status == 0, "\(run)")
        return (try run.lines.map(Printed.init), written, run.stderr)
    }

    @Test func aResumeFileLoopAcrossRestartsOfADurableKvodPrintsEveryChangeOnceInOrder() async throws {
        let (printed, written, stderr) = try await runThroughRestarts(durable: true)
        #expect(written.epochs.count == 1, "a data directory keeps its epoch")
        #expect(printed.map(\.new) == (1...written.last).map { Optional($0) }, "no gap, no repeat: \(printed)")
        #expect(printed.allSatisfy { !$0.isInitial && $0.epoch == written.epochs[0] }, "\(printed)")
        #expect(zip(printed, printed.dropFirst()).allSatisfy { $1.seq == $0.seq + 1 }, "\(printed)")
        #expect(!stderr.contains("compacted"), "\(stderr)")
    }

    @Test func aResumeFileLoopAcrossRestartsOfAnInMemoryKvodResyncsInEachNewEpochWithNoForeignEvent() async throws {
        let (printed, written, stderr) = try await runThroughRestarts(durable: false)
        #expect(written.epochs.count == 4, "each start of a kvod without data is a new epoch")
        // The stream, cut where the epoch changes: one run per kvod, in the order they ran, none coming back.
        var runs: [[Printed]] = []
        for event in printed {
            if runs.last?.last?.epoch == event.epoch { runs[runs.count - 1].append(event) } else { runs.append([event]) }
        }
        #expect(runs.map { $0[0].epoch } == written.epochs, "\(printed)")
        for (index, run) in runs.enumerated() {
            // After the first, each kvod's run starts with the current value (--resync), then every change.
            #expect(run[0].isInitial == (index > 0), "\(run)")
            #expect(run.dropFirst().allSatisfy { !$0.isInitial }, "\(run)")
            #expect(zip(run, run.dropFirst()).allSatisfy { $1.seq == $0.seq + 1 }, "no gap, no repeat: \(run)")
            for event in run {
                #expect(event.new == written.value(in: event.epoch, at: event.seq), "\(event) in \(written)")
            }
        }
        #expect(printed.last?.new == written.last)
        #expect(stderr.components(separatedBy: "printing the current values (--resync)").count - 1 == 3, "\(stderr)")
    }

    /// `kvoctl info`'s epoch, parsed.
    func info(_ kvod: KVODProcess) async throws -> [String: Any] {
        let run = try await KVOCtl.run(kvod, ["info"])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run)")
    }

    @Test func infoPrintsTheEpochTheOldestSeqAndThePointToResumeFromAsEpochColonSeq() async throws {
        let kvod = try await KVODProcess(arguments: ["--history", "2"])
        for value in 1...3 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let fields = try await info(kvod)
        let epoch = try #require(fields["epoch"] as? String)
        #expect(epoch.count == 16)
        #expect(fields["oldestSeq"] as? Int == 2 && fields["seq"] as? Int == 3)
        #expect(fields["resume"] as? String == "\(epoch):3")
    }

    @Test func observeSinceEpochColonSeqReplaysAndPrintResumeNamesWhereToResumeAfterEachEvent() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "o", "k", "1"])
        let start = try #require(try await info(kvod)["resume"] as? String)
        for value in 2...3 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let replayed = try await KVOCtl.run(kvod, ["observe", "o", "k", "--new", "--since", start, "--print-resume",
                                                   "--count", "2"])
        #expect(replayed.status == 0 && replayed.stderr.isEmpty, "\(replayed)")
        let epoch = try #require(start.split(separator: ":").first)
        #expect(replayed.lines == [
            #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":2,"seq":2,"resume":"\#(epoch):2"}"#,
            #"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":3,"seq":3,"resume":"\#(epoch):3"}"#,
        ])
        // From the last point printed: nothing again, only what comes next.
        let next = try RunningCommand(KVOCtl.binaryURL, ["observe", "o", "k", "--new", "--since", "\(epoch):3",
                                                         "--count", "1", "--socket", kvod.socketPath])
        _ = try await KVOCtl.run(kvod, ["set", "o", "k", "4"])
        let run = try await next.wait()
        #expect(run.lines.count == 1 && run.lines[0].contains(#""new":4"#), "\(run)")
    }

    @Test func observeFromAPointOfAnotherEpochExitsSixSayingWhatToDoOrResyncsWithTheCurrentValue() async throws {
        let kvod = try await KVODProcess()
        _ = try await KVOCtl.run(kvod, ["set", "o", "k", "1"])
        let foreign = ["observe", "o", "k", "--new", "--since", "0123456789abcdef:1", "--count", "1"]
        let refused = try await KVOCtl.run(kvod, foreign)
        #expect(refused.status == 6 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr.hasPrefix("kvoctl: compacted: ") && refused.stderr.hasSuffix("add --resync\n"),
                "\(refused.stderr)")
        let resynced = try await KVOCtl.run(kvod, foreign + ["--resync"])
        #expect(resynced.status == 0, "\(resynced)")
        #expect(resynced.lines == [#"{"event":"change","object":"o","keyPath":"k","kind":"setting","initial":true,"new":1,"seq":1}"#])
        #expect(resynced.stderr.contains("printing the current values (--resync)"), "\(resynced.stderr)")
        #expect(try await KVOCtl.run(kvod, foreign + ["--resync", "--quiet"]).stderr.isEmpty)
    }

    @Test func aBareSeqStillWorksWithAWarningThatItHasNoEpoch() async throws {
        let kvod = try await KVODProcess()
        for value in 1...2 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let bare = try await KVOCtl.run(kvod, ["observe", "o", "k", "--since", "1", "--count", "1"])
        #expect(bare.status == 0 && bare.lines.count == 1, "\(bare)")
        #expect(bare.stderr.contains("warning: --since 1 without an epoch"), "\(bare.stderr)")
        #expect(try await KVOCtl.run(kvod, ["observe", "o", "k", "--since", "1", "--count", "1", "--quiet"])
            .stderr.isEmpty)
        for bad in ["x:1", "1:2:3", "-1", "abc"] {
            let run = try await KVOCtl.run(kvod, ["observe", "o", "k", "--since", bad, "--count", "1"])
            #expect(run.status == 2 && run.stderr.contains("EPOCH:SEQ"), "\(bad): \(run)")
        }
    }

    @Test func aResumeFileIsCreatedAtOnceRewrittenAfterEachEventAndRefusedWhenItHoldsNoPoint() async throws {
        let kvod = try await KVODProcess()
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/point"
        let epoch = try #require(try await info(kvod)["epoch"] as? String)
        let fresh = try await KVOCtl.run(kvod, ["observe", "o", "k", "--resume-file", file, "--timeout", "0.2"])
        #expect(fresh.status == 0 && fresh.stdout.isEmpty, "\(fresh)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "\(epoch):0\n", "from now")

        for value in 1...2 { _ = try await KVOCtl.run(kvod, ["set", "o", "k", String(value)]) }
        let first = try await KVOCtl.run(kvod, ["observe", "o", "k", "--new", "--resume-file", file, "--count", "1"])
        #expect(first.lines.count == 1 && first.lines[0].contains(#""new":1"#), "\(first)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "\(epoch):1\n")
        let second = try await KVOCtl.run(kvod, ["observe", "o", "k", "--new", "--resume-file", file, "--count", "1"])
        #expect(second.lines.count == 1 && second.lines[0].contains(#""new":2"#), "\(second)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["point"], "no temporary file left")

        try "0123456789abcdef:1\n".write(toFile: file, atomically: false, encoding: .utf8)
        let foreign = try await KVOCtl.run(kvod, ["observe", "o", "k", "--resume-file", file, "--count", "1"])
        #expect(foreign.status == 6 && foreign.stderr.contains("remove \(file) to start from now"), "\(foreign)")
        try "garbage\n".write(toFile: file, atomically: false, encoding: .utf8)
        let garbage = try await KVOCtl.run(kvod, ["observe", "o", "k", "--resume-file", file, "--count", "1"])
        #expect(garbage.status == 2 && garbage.stderr.contains("does not hold a resume point"), "\(garbage)")
        let unwritable = try await KVOCtl.run(kvod, ["observe", "o", "k", "--resume-file", directory + "/no/point",
                                                     "--count", "1"])
        #expect(unwritable.status == 2 && unwritable.stderr.contains("No such file or directory"), "\(unwritable)")
        for arguments in [["--initial"], ["--since", "\(epoch):1"], ["k2"], ["--print-resume", "k2"]] {
            let run = try await KVOCtl.run(kvod, ["observe", "o", "k", "--resume-file", file] + arguments)
            #expect(run.status == 2, "\(arguments): \(run)")
        }
        #expect(try await KVOCtl.run(kvod, ["observe", "o", "k", "--resync"]).status == 2, "--resync needs a point")
    }
}
