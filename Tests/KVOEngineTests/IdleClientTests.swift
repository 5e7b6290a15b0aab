import KVOValues
import Testing
@testable import KVOEngine

/// `Engine.setAside`: a client is set aside between requests (HTTP's kept
/// connections) only when nothing of its requests is left on it, and then it
/// is no client until taken back.
@Suite struct IdleClientTests {
    let fixture = EngineFixture()

    @Test func setAsideWhenBlankUncountsTheClientUntilTakenBack() {
        let client = fixture.makeClient()
        fixture.ok(["op": "set", "object": "o", "keyPath": "a", "value": 1], from: client)
        fixture.fails(["op": "get", "object": "o", "keyPath": "missing"], from: client, code: "not_found")
        let before = fixture.engine.clientCount
        #expect(fixture.engine.setAside(client))
        #expect(fixture.engine.clientCount == before - 1)
        fixture.engine.takeBack(client)
        #expect(fixture.engine.clientCount == before)
        #expect(fixture.send(#"{"op":"get","object":"o","keyPath":"a"}"#, from: client).reply.member("value") == 1)
    }

    @Test func setAsideWhenAnythingIsLeftRefusesAndCountsTheClientStill() {
        let observing = fixture.makeClient()
        observing.observe("o", keyPath: keyPath("a"), options: [.new], context: nil)
        let owning = fixture.makeClient()
        fixture.ok(["op": "set", "object": "o", "keyPath": "e", "value": 1, "ephemeral": true], from: owning)
        let unread = fixture.makeClient()
        fixture.handle(#"{"op":"get","object":"o","keyPath":"a"}"#, from: unread)
        let closed = fixture.makeClient()
        fixture.engine.closeClient(closed)
        let before = fixture.engine.clientCount
        for client in [observing, owning, unread, closed] {
            #expect(!fixture.engine.setAside(client), "\(client)")
        }
        #expect(fixture.engine.clientCount == before)
    }
}
