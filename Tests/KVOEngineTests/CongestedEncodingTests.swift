import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 (the soak's 88.8 ms turn): a node's event was encoded even when
/// every observation of it belonged to a congested client, which holds events
/// without their bytes; 200 sets of a member of a 20,000-member document to
/// congested whole-document observers encoded the document 200 times in one turn.
@Suite struct CongestedEncodingTests {
    let fixture = EngineFixture()

    private func bigDocument(_ writer: ClientController) {
        var members = JSONObject()
        for index in 0..<2_000 { members["m\(index)"] = .number(JSONNumber(index)) }
        fixture.ok(["op": "set", "object": "big", "value": .object(members)], from: writer)
    }

    @Test func aNodeWhoseObserversAreAllCongestedEncodesNothingAndTheHeldEventIsStillRight() {
        let writer = fixture.makeClient()
        bigDocument(writer)
        let congested = (0..<2).map { _ in fixture.makeClient() }
        for client in congested {
            fixture.ok(["op": "observe", "prefix": "", "options": ["new"]], from: client)
            _ = fixture.take(from: client)
            client.markCongested()
        }
        let before = fixture.shared.encodedEventBytes
        for value in 0..<50 {
            fixture.ok(["op": "set", "object": "big", "keyPath": "m7", "value": .number(JSONNumber(value))], from: writer)
        }
        #expect(fixture.shared.encodedEventBytes == before, "\(fixture.shared.encodedEventBytes - before) bytes encoded")
        congested[0].markDrained()
        let released = fixture.take(from: congested[0]).events
        #expect(released.count == 1 && released[0].member("new")?.member("m7") == 49)
        #expect(released[0].member("coalesced") == 49)
    }

    @Test func oneFlowingObserverStillGetsItsBytes() {
        let writer = fixture.makeClient()
        bigDocument(writer)
        let stuck = fixture.makeClient()
        let reader = fixture.makeClient()
        for client in [stuck, reader] {
            fixture.ok(["op": "observe", "prefix": "", "options": ["new"]], from: client)
            _ = fixture.take(from: client)
        }
        stuck.markCongested()
        let before = fixture.shared.encodedEventBytes
        fixture.ok(["op": "set", "object": "big", "keyPath": "m7", "value": 1], from: writer)
        #expect(fixture.shared.encodedEventBytes > before)
        #expect(fixture.take(from: reader).events.first?.member("new")?.member("m7") == 1)
    }
}
