import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `observe` with `since`: what is replayed must be what a live observer got.
@Suite struct ReplayTests {
    static let objects = ["o", "p"]
    static let keyPaths = ["a", "a.b", "a.b.c", "a.b.c.e", "a.d", "a.list", "list", "x"]
    static let optionSets = [#"["new","old"]"#, #"["new","old","prior"]"#, #"["old"]"#, #"["new"]"#, "[]"]

    /// A random request over a few objects and nested key paths: sets of
    /// scalars, objects and arrays, deletes of members and whole objects,
    /// and the three collection ops (which fail, changing nothing, where no
    /// array is).
    static func randomRequest(_ rng: inout SplitMix64) -> String {
        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
        let object = pick(objects)
        let keyPath = pick(keyPaths)
        let value = pick([#"1"#, #""s""#, #"null"#, #"{"c":{"e":2},"z":3}"#, #"{"b":{"c":4},"d":[1]}"#, #"[1,2,3]"#,
                          #"{"e":true}"#, #"{}"#])
        switch Int.random(in: 0..<10, using: &rng) {
        case 0...3:
            return #"{"op":"set","object":"\#(object)","keyPath":"\#(keyPath)","value":\#(value)}"#
        case 4:
            return #"{"op":"delete","object":"\#(object)","keyPath":"\#(keyPath)"}"#
        case 5:
            return #"{"op":"delete","object":"\#(object)"}"#
        case 6:
            return #"{"op":"insert","object":"\#(object)","keyPath":"\#(pick(["list", "a.list"]))","index":0,"values":[7,8]}"#
        case 7:
            return #"{"op":"remove","object":"\#(object)","keyPath":"\#(pick(["list", "a.list"]))","indexes":[1,0]}"#
        case 8:
            return #"{"op":"replace","object":"\#(object)","keyPath":"\#(pick(["list", "a.list"]))","index":0,"value":9}"#
        default:
            return #"{"op":"set","object":"\#(object)","keyPath":"\#(pick(["zz", "a.zz", "a.b.zz"]))","value":0}"#
        }
    }

    /// Every observation a live client holds, each with a context naming it,
    /// so its events can be told apart.
    static func observeRequests(since: UInt64?) -> [String] {
        var requests: [String] = []
        for object in objects {
            for keyPath in keyPaths {
                for (index, options) in optionSets.enumerated() {
                    let since = since.map { #","since":\#($0)"# } ?? ""
                    requests.append(#"{"op":"observe","object":"\#(object)","keyPath":"\#(keyPath)","options":\#(options),"context":"\#(object) \#(keyPath) \#(index)"\#(since)}"#)
                }
            }
        }
        return requests
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func replayFromAnySeqIsByteForByteWhatALiveObserverGot(seed: UInt64) throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let live = fixture.makeClient()
        // One connection per observation, so that each one's events are its own.
        var liveLines: [String: [String]] = [:]
        let liveClients = Self.observeRequests(since: nil).map { request -> (String, ClientController) in
            let client = fixture.makeClient()
            fixture.send(request, from: client)
            return (request, client)
        }
        var rng = SplitMix64(seed: seed)
        var seqAfterRequest: [UInt64] = []
        for _ in 0..<400 {
            fixture.send(Self.randomRequest(&rng), from: live)
            seqAfterRequest.append(engine.store.seq)
            for (request, client) in liveClients { liveLines[request, default: []] += fixture.take(from: client).text }
        }
        #expect(engine.store.seq > 150, "the random requests should mostly succeed")
        for since in [0, seqAfterRequest[99], seqAfterRequest[250], engine.store.seq] {
            for (request, replayRequest) in zip(Self.observeRequests(since: nil), Self.observeRequests(since: since)) {
                let expected = liveLines[request, default: []].filter { Self.seq(of: $0) > since }
                let lines = fixture.send(replayRequest).text
                let replayed = Array(lines.dropLast())
                // On a mismatch, show the first line that differs, not thousands.
                let first = zip(replayed, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(replayed.count, expected.count)
                #expect(replayed == expected, """
                    \(replayRequest): \(replayed.count) lines replayed, \(expected.count) live; first difference at \(first):
                    replayed \(first < replayed.count ? replayed[first] : "nothing")
                    live     \(first < expected.count ? expected[first] : "nothing")
                    """)
                if replayed != expected { return }
                #expect(lines.last == #"{"ok":true,"seq":\#(engine.store.seq),"epoch":"\#(engine.epoch)"}"#)
            }
        }
    }

    /// Observations of one connection made by three requests, each naming
    /// several key paths of one tree: its events of one change interleave as
    /// the live dispatch walks the tree (ancestors, the path, then under it).
    static let connectionRequests = [
        #"{"op":"observe","object":"o","keyPaths":["a.b.c","list","a","a.b.c.e","x","a.d","a.b","a.list"],"options":["new","old","prior"],"context":"keys"}"#,
        #"{"op":"observe","object":"o","options":["new","old"],"context":"document"}"#,
        #"{"op":"observe","prefix":"","keyPaths":["a.d","a","a.b.c","list","a.b"],"options":["new","old"],"context":"prefix"}"#,
    ]

    @Test(arguments: [UInt64(4), 5])
    func replayOfOneRequestInterleavesItsObservationsAsTheLiveDispatchDid(seed: UInt64) throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let writer = fixture.makeClient()
        let live = fixture.makeClient()
        for request in Self.connectionRequests { fixture.send(request, from: live) }
        var liveLines: [String] = []
        var rng = SplitMix64(seed: seed)
        var seqAfterRequest: [UInt64] = []
        for index in 0..<300 {
            // Now and then a batch: its changes follow each other with nothing between.
            if index % 7 == 0 {
                fixture.send(#"{"op":"batch","ops":[\#(Self.randomRequest(&rng)),\#(Self.randomRequest(&rng))]}"#, from: writer)
            } else {
                fixture.send(Self.randomRequest(&rng), from: writer)
            }
            seqAfterRequest.append(engine.store.seq)
            liveLines += fixture.take(from: live).text
        }
        for since in [0, seqAfterRequest[150], engine.store.seq] {
            let resumed = fixture.makeClient()
            for request in Self.connectionRequests {
                let context = try JSONReader.parse(request)["context"]!
                let expected = liveLines.filter {
                    Self.seq(of: $0) > since && (try? JSONReader.parse($0)["context"]) == context
                }
                let replayed = Array(fixture.send(request.dropLast() + #","since":\#(since)}"#, from: resumed).text.dropLast())
                let first = zip(replayed, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(replayed.count, expected.count)
                #expect(replayed == expected, """
                    \(context) since \(since): \(replayed.count) lines replayed, \(expected.count) live; first difference at \(first):
                    replayed \(first < replayed.count ? replayed[first] : "nothing")
                    live     \(first < expected.count ? expected[first] : "nothing")
                    """)
            }
        }
    }

    static func seq(of line: String) -> UInt64 {
        guard let value = try? JSONReader.parse(line), case .number(let number)? = value["seq"] else { return 0 }
        return UInt64(number.literal) ?? 0
    }

    @Test func observeOfSeveralKeyPathsMergesTheirReplayInSeqOrder() throws {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#, from: client)
        fixture.send(#"{"op":"set","object":"o","keyPath":"x","value":2}"#, from: client)
        fixture.send(#"{"op":"set","object":"o","keyPath":"a.b","value":3}"#, from: client)
        let lines = fixture.send(#"{"op":"observe","object":"o","keyPaths":["x","a.b","a"],"since":0}"#).text
        #expect(lines.map(Self.seq(of:)) == [1, 1, 2, 3, 3, 3], "the reply carries the current seq")
        #expect(lines[0].contains(#""keyPath":"a""#) && lines[1].contains(#""keyPath":"a.b""#))
    }

    @Test func sinceTheCurrentSeqReplaysNothingAndLiveEventsFollow() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client)
        let observer = fixture.makeClient()
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"k","options":["new","initial"],"since":1}"#, from: observer).text
            == [#"{"ok":true,"seq":1,"epoch":"\#(engine.epoch)"}"#], "no replay, and no initial event with since")
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":2}"#, from: client)
        #expect(fixture.take(from: observer).text == [#"{"event":"change","object":"o","keyPath":"k","kind":"setting","new":2,"seq":2}"#])
    }

    @Test func sinceOlderThanTheHistoryIsCompactedWithTheOldestSeqHeld() throws {
        let fixture = EngineFixture(configuration: EngineConfiguration(historyCapacity: 3))
        let client = fixture.makeClient()
        for value in 1...5 { fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#, from: client) }
        // Held: 3, 4, 5. since = 2 replays 3...5; since = 1 would need 2.
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":2}"#).text.count == 4)
        let observer = fixture.makeClient()
        let reply = fixture.send(#"{"op":"observe","id":7,"object":"o","keyPath":"k","since":1}"#, from: observer).reply
        #expect(reply["ok"] == false)
        #expect(reply["id"] == 7)
        #expect(reply["error"]?["code"] == "compacted")
        #expect(reply["error"]?["oldestSeq"] == 3)
        #expect(fixture.send(#"{"op":"observations"}"#, from: observer).reply["observations"] == [], "a failed observe observes nothing")
    }

    @Test func resumePointOfAnotherEpochIsCompactedAndOfThisOneIsReplayed() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client)
        let other = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":0,"epoch":"0123456789abcdef"}"#, from: client).reply
        #expect(other["error"]?["code"] == "compacted")
        #expect(other["error"]?["epoch"] == .string(engine.epoch))
        let same = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":0,"epoch":"\#(engine.epoch)"}"#).text
        #expect(same.count == 2)
        #expect(Engine().epoch != engine.epoch)
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"j","epoch":"x"}"#, from: client).reply["error"]?["code"] == "bad_request")
    }

    @Test func sinceInTheFutureOrNotASeqIsBadRequest() throws {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client)
        for since in ["2", "-1", "1.5", #""1""#] {
            let reply = fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":\#(since)}"#, from: client).reply
            #expect(reply["error"]?["code"] == "bad_request", "since \(since)")
        }
        #expect(fixture.send(#"{"op":"get","object":"o","since":0}"#, from: client).reply["error"]?["code"] == "bad_request")
        #expect(fixture.send(#"{"op":"observations"}"#, from: client).reply["observations"] == [])
    }

    @Test func zeroHistoryResumesOnlyFromTheCurrentSeq() throws {
        let fixture = EngineFixture(configuration: EngineConfiguration(historyCapacity: 0))
        let client = fixture.makeClient()
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#, from: client)
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":0}"#, from: client).reply["error"]?["oldestSeq"] == 2)
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":1}"#, from: client).reply["ok"] == true)
    }

    @Test func alreadyObservedKeyPathIsNotReplayedAgain() throws {
        let fixture = EngineFixture()
        let engine = fixture.engine
        let observer = fixture.makeClient()
        fixture.send(#"{"op":"observe","object":"o","keyPath":"k"}"#, from: observer)
        fixture.send(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        #expect(fixture.take(from: observer).text.count == 1)
        #expect(fixture.send(#"{"op":"observe","object":"o","keyPath":"k","since":0}"#, from: observer).text
            == [#"{"ok":true,"seq":1,"epoch":"\#(engine.epoch)"}"#])
    }
}
