import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// `--max-client-memory` as events are written, not only when each client is
/// flushed: a hostile run put 781 MB in the outputs of 1,000 observers that
/// did not read with one 1 MB `set` under a 32 MB budget. And when clients
/// that do not read hold the whole budget, the others are not kept waiting
/// for ever: those are disconnected (Redis 7's client eviction).
@Suite(.serialized, .onDedicatedThread) struct ClientMemoryRoomTests {
    static let budget = 4 << 20
    // Under --max-line-bytes (1 MiB) with the rest of the request.
    static let valueBytes = 1_000_000

    static func largeSet(_ object: String, _ mark: String) -> String {
        #"{"op":"set","object":"\#(object)","keyPath":"k","value":"\#(mark)\#(String(repeating: "v", count: valueBytes))"}"#
    }

    @Test func oneLargeSetToManyClientsThatDoNotReadStaysWithinTheBudgetAndEveryOneGetsItOnceTheyRead() throws {
        let observers = 40
        // No eviction here: only the budget as events are written.
        let kvod = try KVODProcess(arguments: ["--max-client-memory", "4m", "--output-soft-seconds", "3600"])
        var clients: [LineClient] = []
        for _ in 0..<observers {
            let client = try LineClient(path: kvod.socketPath)
            #expect(try client.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
            clients.append(client)
        }
        let setter = try LineClient(path: kvod.socketPath)
        let baseline = try ProcessStats(pid: kvod.pid).residentBytes()
        #expect(try setter.request(Self.largeSet("o", "first")).reply["ok"] == true)
        let clientMemory = try #require(try setter.request(#"{"op":"info"}"#).reply["clientMemory"])
        let peak = clientMemory["peak"]?.intValue ?? .max
        print("\(observers) observers that do not read, one set of \(Self.valueBytes) bytes: clientMemory \(clientMemory)")
        // The budget, one event past it, and up to 16 KiB of small events per client: not 40 copies.
        #expect(peak <= Self.budget + Self.valueBytes + observers * (16 << 10), "peak \(peak)")
        #expect((clientMemory["congested"]?.intValue ?? 0) >= 1)
        if TestEnvironment.residentMemoryIsMeaningful {
            let grown = try ProcessStats(pid: kvod.pid).peakResidentBytes() - baseline
            #expect(grown < 20 << 20, "RSS grew \(grown) bytes for \(observers) copies of \(Self.valueBytes)")
        }
        // All read at once: those held drain as the others' output goes, and each gets the value.
        let received = ReceivedValues(count: observers)
        let readers = DispatchGroup()
        for (index, client) in clients.enumerated() {
            // Each thread reads its own client only; the test reads none of them meanwhile.
            nonisolated(unsafe) let client = client
            readers.enter()
            Thread.detachNewThread {
                defer { readers.leave() }
                received.set(index, (try? client.readJSON(timeout: 30))?["new"]?.stringValue?.prefix(5).description)
            }
        }
        #expect(readers.wait(timeout: .now() + 60) == .success)
        #expect(received.values == Array(repeating: "first", count: observers), "\(received.values)")
        withExtendedLifetime(clients) {}
    }

    /// Also with a data directory, where output waits for its commit before the socket: that wait is
    /// kvod's, so a client that reads is neither taken for one that does not nor left waiting.
    @Test(arguments: [false, true])
    func clientsThatHoldTheBudgetUnreadAreDisconnectedSoThatAWaitingReaderIsServed(durable: Bool) throws {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--max-client-memory", "4m", "--output-soft-seconds", "1"]
                                   + (durable ? ["--data-dir", data.path] : []))
        var stuck: [LineClient] = []
        for _ in 0..<8 {
            let client = try LineClient(path: kvod.socketPath)
            #expect(try client.request(#"{"op":"observe","object":"stuck","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
            stuck.append(client)
        }
        let setter = try LineClient(path: kvod.socketPath)
        // The clients that never read fill the budget...
        #expect(try setter.request(Self.largeSet("stuck", "s")).reply["ok"] == true)
        // ...so a reader that holds nothing waits for room for a large event of its own.
        let reader = try LineClient(path: kvod.socketPath)
        #expect(try reader.request(#"{"op":"observe","object":"mine","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
        #expect(try setter.request(Self.largeSet("mine", "mine")).reply["ok"] == true)
        let event = try reader.readJSON(timeout: 30)
        #expect(event["new"]?.stringValue?.hasPrefix("minev") == true)
        // It reads on: small events and the next large one come, and it is still connected.
        for index in 0..<3 {
            #expect(try setter.request(#"{"op":"set","object":"mine","keyPath":"k","value":\#(index)}"#).reply["ok"] == true)
            #expect(try reader.readJSON(timeout: 30)["new"]?.intValue == index)
        }
        #expect(try setter.request(Self.largeSet("mine", "again")).reply["ok"] == true)
        #expect(try reader.readJSON(timeout: 30)["new"]?.stringValue?.hasPrefix("againv") == true)
        #expect(try reader.request(#"{"op":"ping"}"#).reply["ok"] == true)
        let info = try setter.request(#"{"op":"info"}"#).reply
        let clientMemory = try #require(info["clientMemory"])
        print("8 clients that never read, then a reader: clientMemory \(clientMemory), connections \(info["connections"] ?? nil)")
        let evicted = clientMemory["evicted"]?.intValue ?? 0
        #expect(evicted >= 1, "\(clientMemory)")
        #expect(evicted < stuck.count, "the reader needed room for one event, not every other client gone")
        #expect(info["connections"]?.intValue == stuck.count + 2 - evicted)
        // An evicted client is told by the end of its stream.
        #expect(stuck.contains { (try? $0.waitForEndOfStream(timeout: 0.5)) == true })
    }
}

/// What each reader thread received, set once per index.
private final class ReceivedValues: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String?]

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: String?) { lock.withLock { storage[index] = value } }

    var values: [String?] { lock.withLock { storage } }
}
