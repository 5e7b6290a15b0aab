import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Issue 33 row 12: `--max-client-memory` bounds what waits for all clients
/// together. Each slow reader stayed within its own output limit, but a
/// flat-out writer with many of them made kvod hold their sum (1.8 GB).
@Suite(.serialized, .onDedicatedThread) struct ClientMemoryBudgetTests {
    static let stuckCount = 6
    static let valueBytes = 64 << 10

    @Test func slowReadersTogetherStayWithinTheBudgetAndTheWriterIsNeverHeldBack() throws {
        // Each reader alone may hold 8 MiB: six of them 48 MiB, the budget 4 MiB.
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "8m", "--output-soft-limit", "8m",
                                               "--max-client-memory", "4m", "--history", "10"])
        var stuck: [LineClient] = []
        for _ in 0..<Self.stuckCount {
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
            stuck.append(client)
        }
        let setter = try LineClient(path: kvod.socketPath)
        let baseline = try ProcessStats(pid: kvod.pid).residentBytes()
        let sets = 300
        for index in 0..<sets {
            let digits = String(index)
            let value = digits + String(repeating: "v", count: Self.valueBytes - digits.count)
            let reply = try setter.request(#"{"op":"set","object":"o","keyPath":"k","value":"\#(value)"}"#).reply
            #expect(reply["ok"] == true, "set \(index): \(reply)")
        }
        let info = try setter.request(#"{"op":"info"}"#).reply
        let clientMemory = try #require(info["clientMemory"])
        let peak = clientMemory["peak"]?.intValue ?? .max
        print("""
            \(Self.stuckCount) stuck readers, \(sets) sets of \(Self.valueBytes) bytes: clientMemory \(clientMemory), \
            RSS \(baseline) before, peak \(try ProcessStats(pid: kvod.pid).peakResidentBytes())
            """)
        #expect(clientMemory["limit"]?.intValue == 4 << 20)
        // The budget, and one flush's events per reader beyond it.
        #expect(peak <= (4 << 20) + Self.stuckCount * 2 * Self.valueBytes, "peak \(peak)")
        #expect((clientMemory["congested"]?.intValue ?? 0) >= 1)
        if TestEnvironment.residentMemoryIsMeaningful {
            let grown = try ProcessStats(pid: kvod.pid).peakResidentBytes() - baseline
            #expect(grown < 24 << 20, "RSS grew \(grown) bytes; the readers' own limits allow 48 MiB")
        }
        // A stuck reader that reads again still ends at the latest value.
        var last = -1
        var read = 0
        while last != sets - 1, read <= sets {
            // Each read waits at most its timeout; there are at most `sets` events.
            let event = try stuck[0].readJSON()
            if let text = event["new"]?.stringValue { last = Int(text.prefix { $0.isNumber }) ?? -1 }
            read += 1
        }
        #expect(last == sets - 1, "the stuck reader's last event was of set \(last)")
        withExtendedLifetime(stuck) {}
    }
}
