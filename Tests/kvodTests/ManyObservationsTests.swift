import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// A connection with a million observations: `unobserve` of a whole object
/// costs that object's observations, not the connection's (a scan of the
/// million held kvod's loop 46 s in the audit), and a page of `observations`
/// is a bounded reply that holds the loop briefly (the whole list was one
/// reply, sorted).
@Suite(.onDedicatedThread) struct ManyObservationsTests {
    /// A tenth under a sanitizer: the budgets are judged against the same requests over a small
    /// state, which a sanitizer slows alike.
    static let objects = TestEnvironment.scaled(1_000, dividedUnderSanitizerBy: 10)
    static let keyPathsPerObject = 999
    static let budget = Duration.milliseconds(50)
    static let pageBudget = Duration.milliseconds(100)

    @Test func unobservingOneObjectAmongAMillionObservationsHoldsTheLoopBriefly() throws {
        let kvod = try KVODProcess(arguments: ["--max-observations-per-connection", "1000000"])
        let client = try LineClient(path: kvod.socketPath)
        let keyPaths = "[" + (0..<Self.keyPathsPerObject).map { "\"k\($0)\"" }.joined(separator: ",") + "]"
        try client.pipeline(count: Self.objects, batch: 20) { #"{"op":"observe","object":"o\#($0)","keyPaths":\#(keyPaths)}"# }
        let total = Self.objects * Self.keyPathsPerObject
        #expect(try client.request(#"{"op":"info"}"#).reply["observations"]?.intValue == total)
        // Another connection observes one of them too: it keeps its own. With
        // 11 objects of its own, it is the reference: the same requests over
        // a hundredth of the observations (what they cost on this machine now).
        let other = try LineClient(path: kvod.socketPath)
        #expect(try other.request(#"{"op":"observe","object":"o7","keyPath":"k1","options":["new"]}"#).reply["ok"] == true)
        try other.pipeline(count: 11) { #"{"op":"observe","object":"r\#($0)","keyPaths":\#(keyPaths)}"# }

        let probe = try PingProbe(socketPath: kvod.socketPath, pid: kvod.pid)
        defer { probe.stop() }
        // Each three times, judged by the median: one scheduling stall of this shared machine must not decide.
        func unobserveHolds(_ connection: LineClient, _ objects: [String]) throws -> Duration {
            try objects.map { object in
                try probe.loopHold {
                    let reply = try connection.request(#"{"op":"unobserve","object":"\#(object)"}"#).reply
                    #expect(reply["ok"] == true, "\(reply)")
                }
            }.sorted()[1]
        }
        let reference = try unobserveHolds(other, ["r0", "r1", "r2"])
        let hold = try unobserveHolds(client, ["o7", "o\(Self.objects / 2)", "o\(Self.objects - 1)"])
        print("unobserve of one object among \(total) observations, longest ping: \(hold) (reference \(reference))")
        #expect(hold < PingProbe.allowance(Self.budget, reference: reference), "unobserve held the loop \(hold)")
        #expect(try client.request(#"{"op":"info"}"#).reply["observations"]?.intValue
            == total - 3 * Self.keyPathsPerObject + 1 + 8 * Self.keyPathsPerObject)

        // A page of 10,000: among 996,003 observations, and among the other's 7,993.
        func pageHolds(_ connection: LineClient) throws -> Duration {
            var next: JSONValue?
            return try (0..<3).map { _ in
                try probe.loopHold {
                    let after = next.map { #","after":\#($0.jsonString)"# } ?? ""
                    let reply = try connection.request(#"{"op":"observations","limit":10000\#(after)}"#).reply
                    #expect(reply["observations"]?.arrayValue?.count ?? 0 >= 2_000, "\(reply["more"] ?? nil)")
                    next = reply["next"]
                }
            }.sorted()[1]
        }
        let pageReference = try pageHolds(other)
        let page = try pageHolds(client)
        print("a page of 10,000 of \(total) observations, longest ping: \(page) (reference \(pageReference))")
        // A page's cost is its length: 10,000 entries written in a debug build.
        #expect(page < PingProbe.allowance(Self.pageBudget, reference: pageReference), "observations held the loop \(page)")
        _ = try client.request(#"{"op":"set","object":"o7","keyPath":"k1","value":1}"#)
        #expect(try other.readJSON()["new"] == 1)
    }
}
