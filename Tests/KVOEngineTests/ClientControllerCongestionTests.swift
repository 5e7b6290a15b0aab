import KVOEngine
import KVOTestSupport
import Testing

/// What a congested client's controller does with events, by policy.
@Suite struct ClientControllerCongestionTests {
    let fixture = EngineFixture()
    let setter: ClientController
    let observer: ClientController
    let recorder = RecordingOutputDelegate()

    init() {
        setter = fixture.makeClient()
        observer = fixture.makeClient()
        observer.outputDelegate = recorder
    }

    private func set(_ key: String, _ value: Int) {
        fixture.handle(#"{"op":"set","object":"o","keyPath":"\#(key)","value":\#(value)}"#, from: setter)
    }

    @Test func deliverWhenOutputPassesAllowanceHoldsOnlyTheLatestEvent() {
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#, from: observer)
        _ = fixture.take(from: observer).lines
        observer.outputAllowance = 200
        for value in 0..<10 { set("k", value) }
        #expect(observer.isCongested)
        #expect(recorder.congestedCalls == 1)
        let before = fixture.take(from: observer).lines
        #expect(!before.isEmpty && before.count < 10)
        #expect(observer.heldEventCount == 1)
        observer.markDrained()
        let released = fixture.take(from: observer).lines
        #expect(released.count == 1)
        #expect(released[0]["new"] == 9)
        // Each of the ten changes was sent, or folded into the released one.
        #expect(before.count + 1 + (released[0]["coalesced"]?.intValue ?? 0) == 10)
        #expect(!observer.isCongested)
    }

    /// Issue 33 row 5: a congested prefix observer held one event per object
    /// name, even for objects made and deleted while it was behind.
    @Test func aCongestedPrefixObserverKeepsNothingForObjectsThatCameAndWent() {
        fixture.handle(#"{"op":"set","object":"tmp/known","keyPath":"k","value":0}"#, from: setter)
        fixture.handle(#"{"op":"observe","prefix":"tmp/","keyPath":"k","options":["new"]}"#, from: observer)
        _ = fixture.take(from: observer).lines
        observer.markCongested()
        for index in 0..<2_000 {
            fixture.handle(#"{"op":"set","object":"tmp/\#(index)","keyPath":"k","value":1}"#, from: setter)
            fixture.handle(#"{"op":"delete","object":"tmp/\#(index)"}"#, from: setter)
        }
        fixture.handle(#"{"op":"set","object":"tmp/new","keyPath":"k","value":1}"#, from: setter)
        fixture.handle(#"{"op":"delete","object":"tmp/known"}"#, from: setter)
        #expect(observer.heldEventCount == 2, "\(observer.heldEventCount)")
        observer.markDrained()
        let released = fixture.take(from: observer).lines
        // What it knew of is deleted; what is there now is told; the rest never was, as far as it knows.
        #expect(released.map { $0["object"] } == ["tmp/new", "tmp/known"], "\(released)")
        #expect(released[1]["new"] == .null)
    }

    @Test func markDrainedReleasesHeldEventsInSeqOrder() {
        fixture.handle(#"{"op":"observe","object":"o","keyPaths":["a","b"],"options":["new"],"context":"c"}"#,
                      from: observer)
        _ = fixture.take(from: observer).lines
        observer.markCongested()
        set("b", 1)
        set("a", 2)
        set("b", 3)
        #expect(fixture.take(from: observer).lines.isEmpty)
        observer.markDrained()
        let released = fixture.take(from: observer).lines
        #expect(released.map { $0["keyPath"] } == ["a", "b"])
        #expect(released[0]["new"] == 2 && released[0]["coalesced"] == nil)
        #expect(released[1]["new"] == 3 && released[1]["coalesced"] == 1)
        #expect(released[1]["context"] == "c")
        #expect((released[0]["seq"]?.intValue ?? 0) < (released[1]["seq"]?.intValue ?? 0))
    }

    @Test func deliverWhenCongestedAndPolicyIsDisconnectAsksToDisconnectAndStopsOutput() {
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"k","policy":"disconnect"}"#, from: observer)
        let reply = fixture.take(from: observer).lines
        #expect(reply.count == 1 && reply.first?["ok"] == true && reply.first?["seq"] != nil)
        observer.markCongested()
        set("k", 1)
        #expect(recorder.disconnectReasons.count == 1)
        #expect(recorder.disconnectReasons.first?.contains("policy disconnect") == true)
        #expect(observer.disconnectReason != nil)
        fixture.handle(#"{"op":"ping"}"#, from: observer)
        set("k", 2)
        #expect(observer.output.isEmpty)
        #expect(recorder.disconnectReasons.count == 1)
    }

    @Test func repliesWhenCongestedAreStillSent() {
        observer.markCongested()
        fixture.handle(#"{"op":"ping","id":1}"#, from: observer)
        fixture.handle(#"{"op":"get","object":"none"}"#, from: observer)
        let lines = fixture.take(from: observer).lines
        #expect(lines.count == 2)
        #expect(lines[0] == ["id": 1, "ok": true])
    }

    @Test func markDrainedWhenObservationWasUnobservedReleasesNothingOfIt() {
        fixture.handle(#"{"op":"observe","object":"o","keyPaths":["a","b"],"options":["new"]}"#, from: observer)
        _ = fixture.take(from: observer).lines
        observer.markCongested()
        set("a", 1)
        set("b", 1)
        fixture.handle(#"{"op":"unobserve","object":"o","keyPath":"a"}"#, from: observer)
        _ = fixture.take(from: observer).lines
        observer.markDrained()
        #expect(fixture.take(from: observer).lines.map { $0["keyPath"] } == ["b"])
    }

    @Test func priorEventsWhenCongestedAreNotHeldButTheChangeIs() {
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"k","options":["new","prior"]}"#, from: observer)
        _ = fixture.take(from: observer).lines
        observer.markCongested()
        set("k", 1)
        observer.markDrained()
        let released = fixture.take(from: observer).lines
        #expect(released.count == 1)
        #expect(released.first?["prior"] == nil)
        #expect(released.first?["new"] == 1)
    }

    @Test func initialEventWhenCongestedIsHeldAfterTheReply() {
        set("k", 5)
        observer.markCongested()
        fixture.handle(#"{"op":"observe","id":1,"object":"o","keyPath":"k","options":["new","initial"]}"#,
                      from: observer)
        let reply = fixture.take(from: observer).lines
        #expect(reply.count == 1 && reply.first?["id"] == 1 && reply.first?["ok"] == true)
        observer.markDrained()
        let released = fixture.take(from: observer).lines
        #expect(released.first?["initial"] == true)
        #expect(released.first?["new"] == 5)
    }

    @Test func observeWithPolicyIsListedAndUnknownPolicyIsBadRequest() {
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"k","policy":"disconnect"}"#, from: observer)
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"j"}"#, from: observer)
        fixture.handle(#"{"op":"observe","object":"o","keyPath":"x","policy":"drop"}"#, from: observer)
        fixture.handle(#"{"op":"observations"}"#, from: observer)
        let lines = fixture.take(from: observer).lines
        #expect(lines[2]["error"]?["code"] == "bad_request")
        // In the order they were made.
        let listed = lines[3]["observations"]
        #expect(listed == [
            ["object": "o", "keyPath": "k", "options": [], "policy": "disconnect", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
            ["object": "o", "keyPath": "j", "options": [], "policy": "coalesce", "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
        ])
    }
}
