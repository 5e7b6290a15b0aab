import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// kvod driven by `socat`, as a shell script would.
@Suite struct SocatTests {
    /// Runs `socat` with `input` on its stdin and returns its stdout lines.
    func socat(_ socketPath: String, input: String) throws -> [JSONValue] {
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/socat"),
                                     ["-t", "5", "-", "UNIX-CONNECT:\(socketPath)"], stdin: input)
        return try run.lines.map { try JSONReader.parse(Array($0.utf8)) }
    }

    @Test func socatSessionSetsObservesAndGets() throws {
        let kvod = try KVODProcess()
        let lines = try socat(kvod.socketPath, input: """
            {"op":"observe","id":1,"object":"cfg","keyPath":"level","options":["new","initial"]}
            {"op":"set","id":2,"object":"cfg","keyPath":"level","value":3}
            {"op":"get","id":3,"object":"cfg","keyPath":"level"}
            not json

            """)
        #expect(lines.count == 6, "\(lines)")
        guard lines.count == 6 else { return }
        #expect(lines[0]["initial"] == true)
        #expect(lines[0]["new"] == .null)
        #expect(lines[1]["ok"] == true && lines[1]["id"] == 1 && lines[1]["seq"] == 0)
        #expect(lines[2]["new"] == 3)
        #expect(lines[3]["id"] == 2)
        #expect(lines[4]["value"] == 3)
        #expect(lines[5]["error"]?["code"] == "bad_json")
    }
}

/// docs/PROTOCOL.md's sessions, pasted into `socat` as a reader would: what
/// kvod answers is what the page shows, byte for byte (the epoch aside).
@Suite struct ProtocolDocumentTests {
    /// The `>` and `<` lines of the code block that follows `heading` in docs/PROTOCOL.md.
    static func session(after heading: String) throws -> (requests: [String], answers: [String]) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        guard let start = text.range(of: heading) else { throw CocoaError(.fileReadCorruptFile) }
        let block = text[start.upperBound...].components(separatedBy: "```")[1]
        let lines = block.split(separator: "\n").map(String.init)
        return (lines.filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) },
                lines.filter { $0.hasPrefix("< ") }.map { String($0.dropFirst(2)) })
    }

    @Test func wholeDocumentAndPrefixSessionIsWhatThePageShows() throws {
        let (requests, answers) = try Self.session(after: "Whole documents and prefixes, pasted into one `socat` session:")
        #expect(requests.count == 7 && answers.count == 11)
        let kvod = try KVODProcess()
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/socat"),
                                     ["-t", "5", "-", "UNIX-CONNECT:\(kvod.socketPath)"],
                                     stdin: requests.joined(separator: "\n") + "\n")
        let epoch = try #require(try JSONReader.parse(Array(run.lines[2].utf8))["epoch"]?.stringValue)
        #expect(run.lines == answers.map { $0.replacingOccurrences(of: "9f0c2d41a7b35e18", with: epoch) })
    }

    @Test func conditionalWriteSessionIsWhatThePageShows() throws {
        let (requests, answers) = try Self.session(after: "current `modSeq`; nothing changes, no seq is consumed, nobody is notified.")
        #expect(requests.count == 4 && answers.count == 4)
        let kvod = try KVODProcess()
        let run = try CommandRun.run(URL(fileURLWithPath: "/usr/bin/socat"),
                                     ["-t", "5", "-", "UNIX-CONNECT:\(kvod.socketPath)"],
                                     stdin: requests.joined(separator: "\n") + "\n")
        #expect(run.lines == answers)
    }
}
