import Foundation
import KVOEngine
import KVOTestSupport
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
