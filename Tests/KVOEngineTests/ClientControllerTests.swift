import KVOValues
import Testing
@testable import KVOEngine

/// KVOController's own test cases (FBKVOControllerTests), ported to a
/// ``ClientController``: observations are made through its API, changes come
/// from another client's requests.
@Suite struct ClientControllerTests {
    let fixture = EngineFixture()

    /// Sets `keyPath` of `object` from a separate writer client; expects success.
    private func set(_ object: String, _ path: String, _ value: JSONValue,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        let writer = fixture.makeClient()
        fixture.ok(["op": "set", "object": .string(object), "keyPath": .string(path), "value": value],
                   from: writer, sourceLocation: sourceLocation)
        fixture.engine.closeClient(writer)
    }

    // MARK: Dedupe

    @Test func observeWhenKeyPathAlreadyObservedKeepsFirstRegistration() {
        let client = fixture.makeClient()
        let first = client.observe("o", keyPath: keyPath("a"), options: [.new], context: "first")
        let second = client.observe("o", keyPath: keyPath("a"), options: [.old, .prior], context: "second")
        #expect(first != nil)
        #expect(second == nil)
        #expect(client.observationCount == 1)
        #expect(fixture.shared.observationCount == 1)
        #expect(client.observations.count == 1)
        #expect(client.observations.first === first)

        set("o", "a", 1)
        // One event, shaped by the first registration: new, no old, no prior, its context.
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "new": 1, "seq": 1,
             "context": "first"],
        ])
    }

    @Test func observeWhenSameKeyPathOfAnotherObjectRegistersBoth() {
        let client = fixture.makeClient()
        #expect(client.observe("o", keyPath: keyPath("a"), options: [], context: nil) != nil)
        #expect(client.observe("p", keyPath: keyPath("a"), options: [], context: nil) != nil)
        #expect(client.observationCount == 2)
        #expect(fixture.shared.observationCount == 2)

        set("o", "a", 1)
        set("p", "a", 2)
        let objects = fixture.take(from: client).events.map { $0.member("object") }
        #expect(objects == ["o", "p"])
    }

    @Test func observeWhenAnotherClientObservesSameKeyPathRegistersBoth() {
        let one = fixture.makeClient()
        let two = fixture.makeClient()
        #expect(one.observe("o", keyPath: keyPath("a"), options: [], context: nil) != nil)
        #expect(two.observe("o", keyPath: keyPath("a"), options: [], context: nil) != nil)
        #expect(fixture.shared.observationCount == 2)

        set("o", "a", 1)
        #expect(fixture.take(from: one).events.count == 1)
        #expect(fixture.take(from: two).events.count == 1)
    }

    // MARK: Unobserving

    @Test func unobserveKeyPathStopsOnlyThatKeyPath() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("b"), options: [], context: nil)
        client.unobserve("o", keyPath: keyPath("a"))
        #expect(!client.isObserving("o", keyPath: keyPath("a")))
        #expect(client.isObserving("o", keyPath: keyPath("b")))
        #expect(client.observationCount == 1)
        #expect(fixture.shared.observationCount == 1)

        set("o", "a", 1)
        set("o", "b", 2)
        let keyPaths = fixture.take(from: client).events.map { $0.member("keyPath") }
        #expect(keyPaths == ["b"])
    }

    @Test func unobserveObjectStopsAllItsKeyPathsAndNoOtherObject() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("b.c"), options: [], context: nil)
        client.observe("p", keyPath: keyPath("a"), options: [], context: nil)
        client.unobserve("o")
        #expect(client.observationCount == 1)
        #expect(fixture.shared.observationCount == 1)
        #expect(client.observations.map(\.object) == ["p"])

        set("o", "a", 1)
        set("o", "b.c", 2)
        set("p", "a", 3)
        let objects = fixture.take(from: client).events.map { $0.member("object") }
        #expect(objects == ["p"])
    }

    /// Unobserving a scope finds the client's observations through the
    /// scope's shared tree when it is small, and through the client's own
    /// table when another client made that tree larger: the same ones either way.
    @Test(arguments: [0, 500])
    func unobserveScopeTakesExactlyThatScopesObservationsOfThatClient(othersKeyPaths: Int) {
        let client = fixture.makeClient()
        let other = fixture.makeClient()
        for path in ["a", "b.c", "b.c.d.e"] {
            client.observe("o", keyPath: keyPath(path), options: [], context: nil)
            client.observe(.prefix("o"), keyPath: keyPath(path), options: [], context: nil)
            other.observe("o", keyPath: keyPath(path), options: [], context: nil)
        }
        client.observe("o", keyPath: .wholeDocument, options: [], context: nil)
        for index in 0..<100 { client.observe("p\(index)", keyPath: keyPath("a"), options: [], context: nil) }
        for index in 0..<othersKeyPaths { other.observe("o", keyPath: keyPath("x.k\(index)"), options: [], context: nil) }
        let othersCount = other.observationCount

        client.unobserve("o")
        #expect(client.observationCount == 103)
        #expect(!client.observations.contains { $0.scope == .object("o") })
        #expect(client.observations.filter { $0.scope == .prefix("o") }.count == 3)
        #expect(other.observationCount == othersCount)
        #expect(fixture.shared.observationCount == 103 + othersCount)

        // Heard by the observers of b.c and b.c.d.e: the client's prefix ones only.
        set("o", "b.c.d.e", 1)
        #expect(fixture.take(from: client).events.map { $0.member("prefix") } == ["o", "o"])
        #expect(fixture.take(from: other).events.count == 2)
        client.unobserve(.prefix("o"))
        client.unobserve("p7")
        #expect(client.observationCount == 99)
        #expect(!client.observations.contains { $0.object == "p7" || $0.scope.isPrefix })
    }

    @Test func unobserveAllStopsEveryObservation() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("b"), options: [], context: nil)
        client.observe("p", keyPath: keyPath("a"), options: [], context: nil)
        client.unobserveAll()
        #expect(client.observationCount == 0)
        #expect(client.observations.isEmpty)
        #expect(fixture.shared.observationCount == 0)

        set("o", "a", 1)
        set("o", "b", 2)
        set("p", "a", 3)
        #expect(fixture.take(from: client).isEmpty)
    }

    @Test func unobserveWhenNeverObservedDoesNothing() {
        let client = fixture.makeClient()
        let other = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        other.observe("o", keyPath: keyPath("b"), options: [], context: nil)

        client.unobserve("o", keyPath: keyPath("b"))  // observed by another client only
        client.unobserve("o", keyPath: keyPath("a.b"))
        client.unobserve("p", keyPath: keyPath("a"))
        client.unobserve("p")
        fixture.makeClient().unobserveAll()
        #expect(client.observationCount == 1)
        #expect(other.observationCount == 1)
        #expect(fixture.shared.observationCount == 2)

        set("o", "a", 1)
        set("o", "b", 2)
        #expect(fixture.take(from: client).events.map { $0.member("keyPath") } == ["a"])
        #expect(fixture.take(from: other).events.map { $0.member("keyPath") } == ["b"])
    }

    @Test func unobserveAfterInitialEventStopsFurtherEvents() {
        let client = fixture.makeClient()
        set("o", "a", 1)
        let observed = fixture.ok(["op": "observe", "object": "o", "keyPath": "a", "options": ["initial", "new"]],
                                  from: client)
        expectJSON(observed.events, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "initial": true, "new": 1, "seq": 1],
        ])
        fixture.ok(["op": "unobserve", "object": "o", "keyPath": "a"], from: client)
        #expect(fixture.shared.observationCount == 0)
        set("o", "a", 2)
        #expect(fixture.take(from: client).isEmpty)
    }

    @Test func observeAgainAfterUnobserveUsesNewRegistration() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [.new], context: "first")
        client.unobserve("o", keyPath: keyPath("a"))
        let again = client.observe("o", keyPath: keyPath("a"), options: [.old], context: "second")
        #expect(again != nil)
        set("o", "a", 1)
        expectJSON(fixture.take(from: client).lines, [
            ["event": "change", "object": "o", "keyPath": "a", "kind": "setting", "old": .null, "seq": 1,
             "context": "second"],
        ])
    }

    // MARK: Lifetime

    @Test func closeClientUnobservesAndSendsNothingMore() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [.new], context: nil)
        client.observe("p", keyPath: keyPath("b"), options: [.new], context: nil)
        let before = fixture.engine.clientCount

        fixture.engine.closeClient(client)
        #expect(client.isClosed)
        #expect(client.observationCount == 0)
        #expect(fixture.shared.observationCount == 0)
        #expect(!fixture.shared.isObserved("o"))
        #expect(fixture.engine.clientCount == before - 1)

        set("o", "a", 1)
        set("p", "b", 1)
        #expect(client.output.isEmpty)
    }

    @Test func closeClientWhenAlreadyClosedCountsItOnce() {
        let client = fixture.makeClient()
        let before = fixture.engine.clientCount
        fixture.engine.closeClient(client)
        fixture.engine.closeClient(client)
        #expect(fixture.engine.clientCount == before - 1)
    }

    @Test func closeDropsPendingOutputAndRefusesNewObservations() {
        let client = fixture.makeClient()
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        set("o", "a", 1)
        #expect(!client.output.isEmpty)

        client.close()
        #expect(client.output.isEmpty)
        #expect(client.observe("o", keyPath: keyPath("a"), options: [], context: nil) == nil)
        #expect(client.observationCount == 0)
        #expect(fixture.shared.observationCount == 0)
        // Requests from a closed client produce nothing either.
        fixture.engine.handle(.request(Request(id: 1, operation: .ping)), from: client)
        #expect(client.output.isEmpty)
    }

    @Test func releaseControllerUnobservesEverything() {
        var client: ClientController? = fixture.engine.makeClient()
        weak let released = client
        let info = client!.observe("o", keyPath: keyPath("a"), options: [.new], context: nil)
        client!.observe("o", keyPath: keyPath("a.b"), options: [.new], context: nil)
        client!.observe("p", keyPath: keyPath("c"), options: [.new], context: nil)
        #expect(fixture.shared.observationCount == 3)

        client = nil
        #expect(released == nil)
        #expect(fixture.shared.observationCount == 0)
        #expect(!fixture.shared.isObserved("o"))
        #expect(!fixture.shared.isObserved("p"))
        #expect(info?.state == .notObserving)
        #expect(info?.controller == nil)
        #expect(fixture.shared.debugDescription.split(separator: "\n").count == 1)

        // Changes to what it observed still work and reach nobody.
        let watcher = fixture.makeClient()
        watcher.observe("x", keyPath: keyPath("y"), options: [], context: nil)
        set("o", "a.b", 1)
        set("p", "c", 1)
        #expect(fixture.take(from: watcher).isEmpty)
    }

    @Test func observationInfoDoesNotKeepControllerAlive() {
        var client: ClientController? = fixture.engine.makeClient()
        let info = client!.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        #expect(info?.controller === client)
        weak let released = client
        client = nil
        #expect(released == nil)
        #expect(info?.controller == nil)
    }

    // MARK: ObservationInfo

    @Test func observationInfoStateGoesInitialThenObservingThenNotObserving() {
        let client = fixture.makeClient()
        let node = fixture.shared.nodeCreating(.object("o"), keyPath("a"))
        let info = ObservationInfo(node: node, options: [], context: nil, controller: client)
        #expect(info.state == .initial)
        #expect(fixture.shared.observationCount == 0)

        fixture.shared.register(info, at: node)
        #expect(info.state == .observing)
        #expect(fixture.shared.observationCount == 1)

        fixture.shared.unregister(info)
        #expect(info.state == .notObserving)
        #expect(fixture.shared.observationCount == 0)

        // It never goes back: unregistering again changes nothing.
        fixture.shared.unregister(info)
        #expect(info.state == .notObserving)
        #expect(fixture.shared.observationCount == 0)
    }

    @Test func observeReturnsObservingInfoAndUnobserveEndsIt() {
        let client = fixture.makeClient()
        let info = client.observe("o", keyPath: keyPath("a.b"), options: [.new, .prior], context: ["k": 1])
        #expect(info?.state == .observing)
        #expect(info?.object == "o")
        #expect(info?.keyPath == keyPath("a.b"))
        #expect(info?.options == [.new, .prior])
        #expect(info?.context == ["k": 1])
        #expect(info?.controller === client)

        client.unobserve("o", keyPath: keyPath("a.b"))
        #expect(info?.state == .notObserving)
    }

    @Test func observationInfosWithSameKeyPathAreEqual() {
        let client = fixture.makeClient()
        let one = client.observe("o", keyPath: keyPath("a.b"), options: [.new], context: 1)!
        let two = client.observe("p", keyPath: keyPath("a.b"), options: [.old, .prior], context: nil)!
        let three = client.observe("o", keyPath: keyPath("a.c"), options: [.new], context: 1)!
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(one != three)
        #expect(Set([one, two, three]).count == 2)
    }

    // MARK: Listing and output

    @Test func observationsListsByObjectThenKeyPath() {
        let client = fixture.makeClient()
        client.observe("p", keyPath: keyPath("a"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("b"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("a.z"), options: [], context: nil)
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)
        let listed = client.observations.map { "\($0.object) \($0.keyPath)" }
        #expect(listed == ["o a", "o a.z", "o b", "p a"])
    }

    @Test func outputDelegateToldOnlyWhenOutputStopsBeingEmpty() {
        final class Recorder: ClientOutputDelegate {
            var calls = 0
            func clientControllerHasOutput(_ controller: ClientController) { calls += 1 }
            func clientControllerBecameCongested(_ controller: ClientController) {}
            func clientController(_ controller: ClientController, mustDisconnectBecause reason: String) {}
        }
        let recorder = Recorder()
        let client = fixture.makeClient()
        client.outputDelegate = recorder
        client.observe("o", keyPath: keyPath("a"), options: [], context: nil)

        set("o", "a", 1)
        set("o", "a", 2)
        #expect(recorder.calls == 1)
        #expect(fixture.take(from: client).events.count == 2)

        fixture.send(["op": "ping"], from: client)
        #expect(recorder.calls == 2)
    }
}
