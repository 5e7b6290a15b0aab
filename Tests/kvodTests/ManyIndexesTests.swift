import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// `insert`, `remove` and `replace` with 10,000 indexes against an array of
/// a million elements: each is one pass over the array, so it holds kvod's
/// loop (every other client) for milliseconds, not for the array's length
/// times the indexes (seconds, before).
@Suite(.onDedicatedThread) struct ManyIndexesTests {
    /// A tenth under a sanitizer (still five times the reference's array).
    static let elements = TestEnvironment.scaled(1_000_000, dividedUnderSanitizerBy: 10)
    static let indexes = 10_000
    /// How long one such request may keep a concurrent ping waiting.
    static let budget = Duration.milliseconds(100)

    private static func list(_ values: some Sequence<Int>) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    @Test func tenThousandIndexesInAMillionElementArrayHoldTheLoopBriefly() throws {
        let kvod = try KVODProcess(arguments: ["--max-line-bytes", "4194304"])
        let client = try LineClient(path: kvod.socketPath)
        // Grown with big inserts, as the audit grew it; and a small one, the
        // same requests' reference (what reading 10,000 indexes costs here).
        let batch = 100_000
        for start in stride(from: 0, to: Self.elements, by: batch) {
            let reply = try client.request(
                #"{"op":"insert","object":"big","keyPath":"list","values":\#(Self.list(start..<start + batch))}"#,
                timeout: 60).reply
            #expect(reply["ok"] == true, "\(reply)")
        }
        let small = 2 * Self.indexes
        _ = try client.request(#"{"op":"insert","object":"small","keyPath":"list","values":\#(Self.list(0..<small))}"#)
        let probe = try PingProbe(socketPath: kvod.socketPath, pid: kvod.pid)
        defer { probe.stop() }
        var random = SplitMix64(seed: 6)
        let reference = try holds(of: "small", count: small, probe, client, &random)
        let big = try holds(of: "big", count: Self.elements, probe, client, &random)
        print("10,000 indexes, loop hold of each: in \(Self.elements) elements \(big), in \(small) \(reference)")
        for (kind, durations) in big {
            let median = durations.sorted()[1]
            let allowed = PingProbe.allowance(Self.budget, reference: reference[kind]!.sorted()[1])
            #expect(median < allowed, "\(kind) held the loop \(median) (median of \(durations)), over \(allowed)")
        }

        // The array has the length the changes left: its last index and no further.
        let count = Self.elements
        let last = try client.request(#"{"op":"replace","object":"big","keyPath":"list","index":\#(count - 1),"value":0}"#)
        #expect(last.reply["ok"] == true, "\(last.reply)")
        let past = try client.request(#"{"op":"replace","object":"big","keyPath":"list","index":\#(count),"value":0}"#)
        #expect(past.reply["error"]?["code"] == "index_out_of_range", "\(past.reply)")
    }

    /// How long `remove`, `replace` and `insert` of 10,000 scattered indexes in
    /// `object`'s array (of `count` elements, at least 20,000) held the loop,
    /// each three times (judged by the median: one scheduling stall of this
    /// shared machine must not decide). The array ends as long as it began.
    private func holds(of object: String, count: Int, _ probe: PingProbe, _ client: LineClient,
                       _ random: inout SplitMix64) throws -> [String: [Duration]] {
        var holds: [String: [Duration]] = [:]
        for _ in 0..<3 {
            let removed = Array((0..<count).shuffled(using: &random).prefix(Self.indexes))
            holds["remove", default: []].append(try probe.loopHold {
                let line = #"{"op":"remove","object":"\#(object)","keyPath":"list","indexes":\#(Self.list(removed))}"#
                let reply = try client.request(line).reply
                #expect(reply["ok"] == true, "\(reply)")
            })

            let replaced = Array((0..<count - Self.indexes).shuffled(using: &random).prefix(Self.indexes))
            holds["replace", default: []].append(try probe.loopHold {
                let line = #"{"op":"replace","object":"\#(object)","keyPath":"list","indexes":\#(Self.list(replaced)),"#
                    + #""values":\#(Self.list(replaced.map { -$0 }))}"#
                let reply = try client.request(line).reply
                #expect(reply["ok"] == true, "\(reply)")
            })

            let position = Int.random(in: 0...count - Self.indexes, using: &random)
            holds["insert", default: []].append(try probe.loopHold {
                let line = #"{"op":"insert","object":"\#(object)","keyPath":"list","index":\#(position),"#
                    + #""values":\#(Self.list(0..<Self.indexes))}"#
                let reply = try client.request(line).reply
                #expect(reply["ok"] == true, "\(reply)")
            })
        }
        return holds
    }
}
