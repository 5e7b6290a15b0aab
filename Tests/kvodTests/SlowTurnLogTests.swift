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

    @Test func aTurnWhoseWorkIsOutsideRequestsNamesThatWork() throws {
        // Initial events over 20,000 objects go out a slice a turn, after the reply: turns of no
        // request whose work, a slice, takes over 1 ms.
        let kvod = try KVODProcess(arguments: ["--slow-turn-milliseconds", "1"])
        let client = try LineClient(path: kvod.socketPath)
        for start in stride(from: 0, to: 20_000, by: 10_000) {
            let ops = (start..<start + 10_000).map { #"{"op":"set","object":"many/\#($0)","keyPath":"k","value":\#($0)}"# }
            let reply = try client.request(#"{"op":"batch","ops":[\#(ops.joined(separator: ","))]}"#, timeout: 60).reply
            #expect(reply["ok"] == true, "\(reply)")
        }
        let reply = try client.request(#"{"op":"observe","prefix":"many/","keyPath":"k","options":["new","initial"]}"#,
                                       timeout: 60).reply
        #expect(reply["ok"] == true, "\(reply)")
        let line = try kvod.waitForLog(containing: "its longest other work: a slice of long work")
        #expect(line.contains("a loop turn worked"), "\(line)")
    }
}
