import Foundation
import KVOTestSupport
import Testing

/// kvod gives the heap pages a burst of output freed back to the kernel:
/// at once, or, within a second of the last trim, once that second is over
/// (before, such a burst stayed resident until some later burst trimmed).
@Suite(.onDedicatedThread) struct HeapTrimTests {
    private static func trims(_ client: LineClient) throws -> Double {
        let reply = try client.request(#"{"op":"metrics"}"#).reply
        guard case .string(let text)? = reply["text"] else { throw TestFailure("not a metrics reply: \(reply)") }
        return try PrometheusText(parsing: text).value("kvod_heap_trims_total") ?? -1
    }

    @Test func aBurstWithinASecondOfTheLastTrimIsTrimmedWhenTheSecondIsOver() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        // A 5.4 MB reply: its output buffer, freed after the write, passes the 4 MiB threshold.
        let member = String(repeating: "x", count: 900_000)
        for index in 0..<6 {
            #expect(try client.request(#"{"op":"set","object":"big","keyPath":"m\#(index)","value":"\#(member)"}"#).reply["ok"] == true)
        }
        #expect(try Self.trims(client) == 0)
        #expect(try client.request(#"{"op":"get","object":"big"}"#).reply["ok"] == true)
        try waitUntil("the first burst is trimmed", timeout: 10) { try Self.trims(client) == 1 }
        let firstTrimSeen = Date()
        #expect(try client.request(#"{"op":"get","object":"big"}"#).reply["ok"] == true)
        let secondBurstDone = Date()
        if secondBurstDone.timeIntervalSince(firstTrimSeen) < 0.5 {
            // Within the second: not at once…
            #expect(try Self.trims(client) == 1)
        }
        // …but once the second is over, without any further request but this wait's metrics.
        try waitUntil("the second burst is trimmed", timeout: 10, recheckEvery: 0.05) { try Self.trims(client) == 2 }
        #expect(Date().timeIntervalSince(firstTrimSeen) >= 0.5)
    }
}
