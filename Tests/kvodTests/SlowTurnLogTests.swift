import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// A loop turn over the bound on its CPU is logged with its longest request,
/// so a slow turn (issue 33) names its cause.
@Suite(.onDedicatedThread) struct SlowTurnLogTests {
    @Test func aTurnOverTheBoundIsLoggedWithItsLongestRequestAndClient() throws {
        // A bound of 1 ms: one set of a 7 MB array takes its turn over it, whatever the machine.
        let kvod = try KVODProcess(arguments: ["--slow-turn-milliseconds", "1", "--max-line-bytes", "8388608"])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true)
        let numbers = (0..<1_000_000).map(String.init).joined(separator: ",")
        let reply = try client.request(#"{"op":"set","object":"big","keyPath":"list","value":[\#(numbers)]}"#,
                                       timeout: 60).reply
        #expect(reply["ok"] == true, "\(reply)")
        // Not "a loop turn worked": kvod's start and the first connection may take turns over 1 ms too.
        let line = try kvod.waitForLog(containing: "its longest request: set from client #")
        #expect(line.contains("a loop turn worked") && line.contains("over 1.0 ms"), "\(line)")
    }
}
