import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// What a client gets beyond its output allowance, as it drains: held events
/// encoded when they go out, initial events from a cursor, a little more
/// than the allowance at a time.
@Suite final class DrainTests {
    let (fixture, writer, observer) = EngineFixture.withTwoClients()

    /// Drains the observer until it is no longer congested; returns each drain's lines.
    private func drainAll() -> [[String]] {
        var drains: [[String]] = []
        while observer.isCongested, drains.count < 10_000 {
            observer.markDrained()
            drains.append(fixture.take(from: observer).text)
        }
        return drains
    }

    private static func withoutCoalesced(_ line: String) -> (line: String, coalesced: Int) {
        guard let range = line.range(of: #","coalesced":[0-9]+"#, options: .regularExpression) else { return (line, 0) }
        let count = Int(line[range].dropFirst(#","coalesced":"#.count)) ?? -1
        return (line.replacingCharacters(in: range, with: ""), count)
    }

    /// The event's observation: its object (or prefix and object) and key path.
    private static func observation(of line: String) throws -> String {
        let event = try JSONReader.parse(line)
        return "\(event["prefix"] ?? .null) \(event["object"] ?? .null) \(event["keyPath"] ?? .null)"
    }

    @Test(arguments: [UInt64(1), 2])
    func heldEventIsTheLiveEventOfTheLatestChangeByteForByte(seed: UInt64) throws {
        // Two clients with the same observations; one reads, one is congested.
        let requests = [
            #"{"op":"observe","object":"o","keyPaths":["a","a.b","a.b.c","a.list","list","x"],"options":["new","old"],"context":"k"}"#,
            #"{"op":"observe","object":"o","options":["new","old"]}"#,
            #"{"op":"observe","prefix":"","keyPaths":["a","list"],"options":["old","new"]}"#,
        ]
        let live = fixture.makeClient()
        for request in requests {
            fixture.send(request, from: live)
            fixture.send(request, from: observer)
        }
        observer.markCongested()
        var rng = SplitMix64(seed: seed)
        var liveLines: [String] = []
        for _ in 0..<300 {
            fixture.send(ReplayTests.randomRequest(&rng), from: writer)
            liveLines += fixture.take(from: live).text
        }
        #expect(fixture.take(from: observer).text.isEmpty)
        var lastLive: [String: String] = [:]
        var liveCount: [String: Int] = [:]
        for line in liveLines {
            let key = try Self.observation(of: line)
            lastLive[key] = line
            liveCount[key, default: 0] += 1
        }
        let dropped = fixture.shared.eventCounts.dropped
        let released = drainAll().joined()
        var releasedKeys: Set<String> = []
        var accounted = dropped
        for line in released {
            let key = try Self.observation(of: line)
            releasedKeys.insert(key)
            let (event, coalesced) = Self.withoutCoalesced(line)
            #expect(event == lastLive[key], "held \(line), live \(lastLive[key] ?? "nothing")")
            accounted += coalesced + 1
            // A prefix observation's object that came and went since takes its events with it.
            if key.hasPrefix("null ") {
                #expect(coalesced + 1 == liveCount[key], "\(key): every event sent or counted")
            } else {
                #expect(coalesced + 1 <= liveCount[key] ?? 0, "\(key)")
            }
        }
        #expect(releasedKeys.count == released.count, "one event per observation (and object)")
        // Each object-scoped observation that had any; a prefix key only while its object has a value.
        for key in lastLive.keys where key.hasPrefix("null ") { #expect(releasedKeys.contains(key), "\(key)") }
        #expect(accounted == liveLines.count, "every event sent, counted as coalesced, or dropped with its object")
        let seqs = try released.map { try JSONReader.parse($0)["seq"]?.intValue ?? 0 }
        #expect(seqs == seqs.sorted(), "in seq order")
    }

    @Test func heldEventsGoOutAboutTheAllowanceAtATimeUntilTheLast() throws {
        let keys = (0..<50).map { "k\($0)" }
        fixture.send(#"{"op":"observe","object":"o","keyPaths":[\#(keys.map { "\"\($0)\"" }.joined(separator: ","))],"options":["new"]}"#, from: observer)
        observer.markCongested()
        let padding = String(repeating: "p", count: 100)
        for key in keys { fixture.send(#"{"op":"set","object":"o","keyPath":"\#(key)","value":"\#(padding)"}"#, from: writer) }
        #expect(observer.heldEventCount == 50)
        observer.outputAllowance = 500
        let drains = drainAll()
        #expect(drains.count > 5, "more than one drain")
        for drain in drains {
            // Each drain stops at the first event that reaches the allowance.
            #expect(drain.dropLast().map { $0.utf8.count + 1 }.reduce(0, +) < 500)
        }
        #expect(drains.joined().map { try? JSONReader.parse($0)["keyPath"] } == keys.map { JSONValue.string($0) })
        #expect(!observer.isCongested && observer.heldEventCount == 0)
    }

    @Test func initialEventsBeyondTheAllowanceFollowTheReplyAsTheClientDrains() throws {
        let keys = (0..<40).map { "k\($0)" }
        for key in keys { fixture.send(#"{"op":"set","object":"o","keyPath":"\#(key)","value":"\#(key)"}"#, from: writer) }
        observer.outputAllowance = 400
        let lines = fixture.send(#"{"op":"observe","id":1,"object":"o","keyPaths":[\#(keys.map { "\"\($0)\"" }.joined(separator: ","))],"options":["new","initial"]}"#, from: observer).text
        let reply = try JSONReader.parse(lines.last ?? "")
        #expect(reply["id"] == 1 && reply["ok"] == true)
        let before = Array(lines.dropLast())
        #expect(!before.isEmpty && before.count < keys.count, "what fits comes before the reply")
        #expect(observer.isCongested)
        let after = drainAll().joined()
        let initial = try (before + after).map { try JSONReader.parse($0) }
        #expect(initial.map { $0["keyPath"] } == keys.map { JSONValue.string($0) })
        #expect(initial.allSatisfy { $0["initial"] == true && $0["new"] == $0["keyPath"] && $0["coalesced"] == nil })
        #expect(initial.allSatisfy { $0["seq"] == reply["seq"] })
    }

    @Test func initialEventOfAKeyPathChangedMeanwhileGivesWayToTheChange() throws {
        for key in ["a", "b", "c"] { fixture.send(#"{"op":"set","object":"o","keyPath":"\#(key)","value":0}"#, from: writer) }
        observer.outputAllowance = 0
        let lines = fixture.send(#"{"op":"observe","object":"o","keyPaths":["a","b","c"],"options":["new","initial"]}"#, from: observer).text
        #expect(lines.count == 1, "only the reply: nothing fits")
        fixture.send(#"{"op":"set","object":"o","keyPath":"b","value":1}"#, from: writer)
        observer.outputAllowance = nil
        let released = try drainAll().joined().map { try JSONReader.parse($0) }
        #expect(released.map { $0["keyPath"] } == ["a", "c", "b"])
        #expect(released[0]["initial"] == true && released[1]["initial"] == true)
        #expect(released[2]["initial"] == nil && released[2]["new"] == 1 && released[2]["coalesced"] == 1,
                "the change stands for the initial event, and counts it")
    }

    @Test func prefixInitialEventsContinueInListOrderAcrossDrains() throws {
        let names = (0..<30).map { "s/\($0 < 10 ? "0" : "")\($0)" }
        for name in names { fixture.send(#"{"op":"set","object":"\#(name)","keyPath":"k","value":"\#(name)"}"#, from: writer) }
        observer.outputAllowance = 300
        let lines = fixture.send(#"{"op":"observe","prefix":"s/","keyPath":"k","options":["new","initial"]}"#, from: observer).text
        // Meanwhile one object goes and one changes; their change events stand for their initial ones.
        fixture.send(#"{"op":"delete","object":"s/25"}"#, from: writer)
        fixture.send(#"{"op":"set","object":"s/20","keyPath":"k","value":"changed"}"#, from: writer)
        let events = try (lines.dropLast() + drainAll().joined()).map { try JSONReader.parse($0) }
        let initial = events.filter { $0["initial"] == true }
        let expected = names.filter { $0 != "s/20" && $0 != "s/25" }
        #expect(initial.map { $0["object"] } == expected.map { JSONValue.string($0) })
        #expect(initial.allSatisfy { $0["new"] == $0["object"] && $0["prefix"] == "s/" })
        let changes = events.filter { $0["initial"] == nil }
        #expect(changes.map { $0["object"] } == ["s/25", "s/20"])
        #expect(changes.map { $0["new"] } == [.null, "changed"])
    }

    @Test func unobservingEveryKeyPathOfPendingInitialEventsDropsThem() throws {
        fixture.send(#"{"op":"set","object":"o","value":{"a":1,"b":2}}"#, from: writer)
        observer.outputAllowance = 0
        fixture.send(#"{"op":"observe","object":"o","keyPaths":["a","b"],"options":["new","initial"]}"#, from: observer)
        #expect(observer.heldEventCount == 1, "one cursor")
        fixture.send(#"{"op":"unobserve","object":"o","keyPath":"a"}"#, from: observer)
        #expect(observer.heldEventCount == 1, "b is still observed")
        fixture.send(#"{"op":"unobserve","object":"o","keyPath":"b"}"#, from: observer)
        #expect(observer.heldEventCount == 0)
        observer.outputAllowance = nil
        #expect(drainAll().joined().isEmpty)
    }

    @Test func replayBeyondTheAllowanceIsFoldedIntoTheLatestEvent() throws {
        for value in 1...20 { fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#, from: writer) }
        observer.outputAllowance = 200
        let lines = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"since":0}"#, from: observer).text
        let replayed = try lines.dropLast().map { try JSONReader.parse($0) }
        #expect(!replayed.isEmpty && replayed.count < 20)
        let released = try drainAll().joined().map { try JSONReader.parse($0) }
        #expect(released.count == 1)
        #expect(released.first?["new"] == 20)
        #expect(replayed.count + 1 + (released.first?["coalesced"]?.intValue ?? 0) == 20)
        #expect(replayed.map { $0["new"] } == (1...replayed.count).map { JSONValue.number(JSONNumber($0)) })
    }
}
