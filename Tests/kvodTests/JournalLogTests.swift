import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Under systemd kvod's stderr is the journal, and each line says its own
/// priority (`<N>`, sd-daemon(3)); anywhere else lines are plain.
@Suite struct JournalLogTests {
    @Test func logWhenJournalStreamIsStderrPrefixesEachLineWithItsPriority() throws {
        let pipe = Pipe()
        // A NOTIFY_SOCKET that is not a path is a warning at start; debug shows the state changes.
        let kvod = try KVODProcess(
            arguments: ["--log-level", "debug"],
            environment: ["JOURNAL_STREAM": try Self.deviceAndInode(of: pipe), "NOTIFY_SOCKET": "not-a-path"],
            stderrPipe: pipe)
        #expect(try kvod.terminate() == 0)
        try kvod.waitForLog(containing: "kvod stopped")
        let lines = kvod.stderrText().split(separator: "\n").map(String.init)

        #expect(try Self.line(containing: "NOTIFY_SOCKET=not-a-path", in: lines).hasPrefix("<4>warning kvod: "))
        #expect(try Self.line(containing: "no --data-dir", in: lines).hasPrefix("<5>notice kvod: "))
        #expect(try Self.line(containing: "listening on", in: lines).hasPrefix("<6>info kvod: "))
        #expect(try Self.line(containing: "daemon state", in: lines).hasPrefix("<7>debug kvod: "))
        #expect(try Self.line(containing: "kvod stopped", in: lines).hasPrefix("<6>info kvod: "))
        // Every line has its priority, and no timestamp: the journal keeps its own.
        let unprefixed = lines.filter { $0.wholeMatch(of: /<[2-7]>(debug|info|notice|warning|error|critical) kvod: .*/) == nil }
        #expect(unprefixed.isEmpty, "\(unprefixed)")
    }

    /// kvod that cannot start says why outside the logger; under the journal
    /// that line is an error too.
    @Test func startupFailureUnderTheJournalIsFiledAsAnError() throws {
        let tooLong = "/tmp/" + String(repeating: "s", count: 120) + ".sock"
        // The shell gives kvod a JOURNAL_STREAM naming the very stderr it inherits.
        let script = #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" --socket "$1""#
        let run = try CommandRun.run(URL(fileURLWithPath: "/bin/sh"),
                                     ["-c", script, KVODProcess.binaryURL.path, tooLong])
        #expect(run.status != 0)
        // The last line is the reason (logged lines about the configuration come first).
        let reason = run.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(reason.hasPrefix("<3>kvod: ") && reason.contains(tooLong), "\(run.stderr)")
        let plain = try CommandRun.run(KVODProcess.binaryURL, ["--socket", tooLong])
        let plainReason = plain.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(plainReason.hasPrefix("kvod: ") && plainReason.contains(tooLong), "\(plain.stderr)")
    }

    @Test func logWithoutJournalStreamWritesPlainTimestampedLines() throws {
        try expectPlainLines(environment: [:])
    }

    /// A JOURNAL_STREAM inherited from a service, with stderr sent elsewhere
    /// (here to a file): it names another file, so lines stay plain.
    @Test func logWhenJournalStreamNamesAnotherFileWritesPlainLines() throws {
        try expectPlainLines(environment: ["JOURNAL_STREAM": try Self.deviceAndInode(of: Pipe())])
    }

    private func expectPlainLines(environment: [String: String]) throws {
        let kvod = try KVODProcess(arguments: ["--log-level", "debug"],
                                   environment: environment.merging(["NOTIFY_SOCKET": "not-a-path"]) { $1 })
        #expect(try kvod.terminate() == 0)
        let lines = kvod.stderrText().split(separator: "\n").map(String.init)
        #expect(try Self.line(containing: "NOTIFY_SOCKET=not-a-path", in: lines).contains(" warning kvod: "))
        #expect(try Self.line(containing: "daemon state", in: lines).contains(" debug kvod: "))
        let timestamped = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} (trace|debug|info|notice|warning|error|critical) kvod: .*/
        let other = lines.filter { $0.wholeMatch(of: timestamped) == nil }
        #expect(other.isEmpty, "\(other)")
    }

    /// `$JOURNAL_STREAM`'s form of a descriptor's file: `device:inode`, in decimal.
    private static func deviceAndInode(of pipe: Pipe) throws -> String {
        var status = stat()
        guard fstat(pipe.fileHandleForWriting.fileDescriptor, &status) == 0 else {
            throw TestFailure("fstat of a pipe failed: errno \(errno)")
        }
        return "\(status.st_dev):\(status.st_ino)"
    }

    private static func line(containing text: String, in lines: [String]) throws -> String {
        guard let line = lines.first(where: { $0.contains(text) }) else {
            throw TestFailure("no log line contains \"\(text)\" in:\n\(lines.joined(separator: "\n"))")
        }
        return line
    }
}
