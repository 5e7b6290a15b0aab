import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// `--max-memory` and `--max-observations-per-connection`: the memory
/// account follows every change exactly, growth past the ceiling is refused
/// naming the limit, reads and deletes keep working, and `info` counts each
/// refusal.
@Suite struct MemoryLimitTests {
    /// The store's estimate worked out afresh from every document.
    private static func walkedEstimate(_ store: Store) -> Int {
        store.documents.reduce(0) { $0 + Store.sizeEstimate(of: $1.key, $1.value) }
    }

    @Test func storeSizeEstimateFollowsEveryKindOfChangeExactly() throws {
        var random = SplitMix64(seed: 17)
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        let keys = ["a", "b", "ccc", "é"]
        func path() -> String {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in keys.randomElement(using: &random)! }
                .joined(separator: ".")
        }
        func value() -> String {
            ["1", "\"text\"", "null", "true", "[1,2,{\"x\":\"y\"}]", "{\"m\":[false],\"n\":-1.5e3}", "\"\(String(repeating: "z", count: Int.random(in: 0...300, using: &random)))\""]
                .randomElement(using: &random)!
        }
        for step in 0..<3_000 {
            let object = "o\(Int.random(in: 0..<4, using: &random))"
            let line: String
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1: line = #"{"op":"set","object":"\#(object)","keyPath":"\#(path())","value":\#(value())}"#
            case 2: line = #"{"op":"set","object":"\#(object)","value":{"k":\#(value())}}"#
            case 3: line = #"{"op":"delete","object":"\#(object)","keyPath":"\#(path())"}"#
            case 4: line = #"{"op":"delete","object":"\#(object)"}"#
            case 5: line = #"{"op":"insert","object":"\#(object)","keyPath":"\#(path())","values":[\#(value()),\#(value())]}"#
            case 6: line = #"{"op":"remove","object":"\#(object)","keyPath":"\#(path())","indexes":[0]}"#
            case 7: line = #"{"op":"replace","object":"\#(object)","keyPath":"\#(path())","index":0,"value":\#(value())}"#
            default:
                line = #"{"op":"batch","ops":[{"op":"set","object":"\#(object)","keyPath":"\#(path())","value":\#(value())},{"op":"delete","object":"\#(object)","keyPath":"\#(path())"}]}"#
            }
            fixture.send(line, from: client)
            guard engine.store.sizeEstimate == Self.walkedEstimate(engine.store) else {
                Issue.record("step \(step), \(line): account \(engine.store.sizeEstimate), walked \(Self.walkedEstimate(engine.store))")
                return
            }
        }
        #expect(engine.store.objectCount > 0 && engine.store.sizeEstimate > 0)
    }

    @Test func writesPastMaxMemoryAreRefusedNamingTheLimitWhileReadsAndDeletesWork() throws {
        let limit = 20_000
        let fixture = EngineFixture(configuration: EngineConfiguration(historyBytes: 4_096, maxMemory: limit))
        let engine = fixture.engine
        let client = fixture.makeClient()
        let value = String(repeating: "m", count: 1_000)
        var refused: JSONValue?
        for index in 0..<100 {
            let reply = fixture.send(#"{"op":"set","object":"o","keyPath":"k\#(index)","value":"\#(value)"}"#, from: client).reply
            if reply["ok"] == false {
                refused = reply
                break
            }
        }
        let error = try #require(refused?["error"], "never refused")
        #expect(error["code"] == "limit_exceeded")
        let message = try #require(error["message"]?.stringValue)
        #expect(message.contains("--max-memory") && message.contains("\(limit)"), "\(message)")
        #expect(engine.memoryEstimate <= limit)
        let seq = engine.store.seq

        // Reads work, and a change that does not grow.
        #expect(fixture.send(#"{"op":"get","object":"o","keyPath":"k0"}"#, from: client).reply["value"]?.stringValue == value)
        #expect(fixture.send(#"{"op":"set","object":"o","keyPath":"k0","value":"\#(String(repeating: "n", count: 1_000))"}"#, from: client).reply["ok"] == true)
        // Less room is left than the refused set needed: ten observations need more.
        let tenKeyPaths = (10..<20).map { "\"k\($0)\"" }.joined(separator: ",")
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPaths":[\#(tenKeyPaths)]}"#, from: client).reply["error"]?["code"]
            == "limit_exceeded", "new observations grow the account too")
        #expect(fixture.send(#"{"op":"insert","object":"o","keyPath":"list","values":["\#(value)"]}"#, from: client).reply["error"]?["code"]
            == "limit_exceeded")
        // A batch counts as a whole: a grow paid for by a delete in it passes.
        #expect(fixture.send(#"{"op":"batch","ops":[{"op":"set","object":"p","keyPath":"x","value":"\#(value)"}]}"#, from: client).reply["error"]?["code"]
            == "limit_exceeded")
        #expect(fixture.send(#"{"op":"batch","ops":[{"op":"set","object":"p","keyPath":"x","value":"\#(value)"},{"op":"delete","object":"o","keyPath":"k2"},{"op":"delete","object":"o","keyPath":"k3"}]}"#, from: client).reply["ok"] == true)
        #expect(engine.store.seq == seq + 4)
        // Shrinking and deleting work, and make room again.
        #expect(fixture.send(#"{"op":"set","object":"o","keyPath":"k1","value":1}"#, from: client).reply["ok"] == true)
        #expect(fixture.send(#"{"op":"delete","object":"o"}"#, from: client).reply["ok"] == true)
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPaths":[\#(tenKeyPaths)]}"#, from: client).reply["ok"] == true)
        #expect(fixture.send(#"{"op":"set","object":"o","keyPath":"again","value":"\#(value)"}"#, from: client).reply["ok"] == true)

        let info = fixture.send(#"{"op":"info"}"#, from: client).reply
        #expect(info["refused"]?["memory"] == 4, "the first set, the observe, the insert and the batch")
        #expect(info["memory"]?["limit"]?.intValue == limit)
        #expect(info["memory"]?["total"]?.intValue == engine.memoryEstimate)
    }

    @Test func observationsPastTheirLimitPerConnectionAreRefusedNamingItAndCounted() throws {
        let fixture = EngineFixture(configuration: EngineConfiguration(maxObservationsPerClient: 2))
        let client = fixture.makeClient()
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPaths":["a","b"]}"#, from: client).reply["ok"] == true)
        let refused = fixture.send(#"{"op":"observe","object":"o","keyPath":"c"}"#, from: client).reply
        #expect(refused["error"]?["code"] == "limit_exceeded")
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("--max-observations-per-connection") && message.contains("2 observations"), "\(message)")
        #expect(fixture.send(#"{"op":"info"}"#, from: client).reply["refused"] == ["connections": 0, "connectionsPerUid": 0, "observations": 1, "memory": 0, "storage": 0])
        #expect(EngineConfiguration().maxObservationsPerClient == 100_000)
    }

    /// A single key path observed again adds nothing: at either limit it is
    /// no refusal, though a new path is (the engine skips the lookup of the
    /// existing observation only while a new one would be admitted).
    @Test(arguments: [EngineConfiguration(maxObservationsPerClient: 1),
                      EngineConfiguration(maxMemory: ResourceAccount.observationBytes)])
    func observingOneKeyPathAgainAtALimitIsNoRefusal(configuration: EngineConfiguration) throws {
        let fixture = EngineFixture(configuration: configuration)
        let client = fixture.makeClient()
        for _ in 0..<2 {
            #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"a"}"#, from: client).reply["ok"] == true)
        }
        let refused = fixture.send(#"{"op":"observe","object":"o","keyPath":"b"}"#, from: client).reply
        #expect(refused["error"]?["code"] == "limit_exceeded")
        let counts = fixture.send(#"{"op":"info"}"#, from: client).reply["refused"]
        #expect((counts?["observations"]?.intValue ?? 0) + (counts?["memory"]?.intValue ?? 0) == 1)
        #expect(client.observationCount == 1)
    }

    @Test func infoPrintsTheDaemonsLoopLagAndStartsANewMaximumAfterEachInfo() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        engine.daemonStatistics.recordLoopTurn(microseconds: 12_345, cpuMicroseconds: 9_001)
        engine.daemonStatistics.recordLoopTurn(microseconds: 7, cpuMicroseconds: 5)
        engine.daemonStatistics.refusedConnections = 3
        let first = fixture.send(#"{"op":"info"}"#, from: client).reply
        #expect(first["loopLagLastMs"]?.jsonString == "0.007")
        #expect(first["loopLagMaxMs"]?.jsonString == "12.345")
        #expect(first["loopLagPeakMs"]?.jsonString == "12.345")
        #expect(first["loopCpuLastMs"]?.jsonString == "0.005")
        #expect(first["loopCpuMaxMs"]?.jsonString == "9.001")
        #expect(first["loopCpuPeakMs"]?.jsonString == "9.001")
        #expect(first["refused"]?["connections"] == 3)
        #expect(first["loopTurns"] == 2)
        engine.daemonStatistics.recordLoopTurn(microseconds: 2_000, cpuMicroseconds: 1_500)
        let second = fixture.send(#"{"op":"info"}"#, from: client).reply
        #expect(second["loopCpuMaxMs"]?.jsonString == "1.500", "the longest since the previous info")
        #expect(second["loopCpuPeakMs"]?.jsonString == "9.001", "the longest since start")
        #expect(second["loopLagMaxMs"]?.jsonString == "2.000", "the longest since the previous info")
        #expect(second["loopLagPeakMs"]?.jsonString == "12.345", "the longest since start")
        #expect(second["loopTurns"] == 3, "every turn since start")
    }

    /// Issue 33 row 2: a context was not counted, so observations with large
    /// contexts went past `--max-memory` unrefused.
    @Test func observationContextsCountInTheAccountAndPastTheLimitAreRefused() {
        let fixture = EngineFixture(configuration: EngineConfiguration(maxMemory: 2_000_000))
        let client = fixture.makeClient()
        let context = JSONValue.string(String(repeating: "c", count: 100_000))
        var admitted = 0
        for index in 0..<100 {
            let reply = fixture.send(["op": "observe", "object": .string("o\(index)"), "keyPath": "k",
                                      "context": context], from: client).reply
            guard reply.member("ok") == true else {
                #expect(reply.member("error")?.member("code") == "limit_exceeded")
                break
            }
            admitted += 1
        }
        // Twice the context's JSON each: about 200 KB, so at most ten fit in 2 MB.
        #expect(admitted >= 5 && admitted <= 10)
        #expect(fixture.engine.memoryEstimate <= 2_000_000)
        #expect(fixture.engine.shared.contextBytes >= admitted * 200_000)
        let info = fixture.ok(["op": "info"], from: client).reply
        #expect((info.member("memory")?.member("observations")?.intValue ?? 0) >= admitted * 200_000)
        fixture.ok(["op": "unobserveAll"], from: client)
        #expect(fixture.engine.shared.contextBytes == 0)
        // Without a context, observations still fit.
        fixture.ok(["op": "observe", "object": "o", "keyPath": "k"], from: client)
    }
}
