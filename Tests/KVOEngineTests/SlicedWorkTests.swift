@testable import KVOEngine
import KVOValues
import Testing

/// Issue 33 row 11: work that one request asks for and that held kvod's
/// loop for one long turn (`unobserveAll` or a close with 100,000
/// observations 97-110 ms; `initial` over a prefix of 300,000 objects
/// 332 ms) is done in slices (``Engine/continueSlicedWork(budget:)``, one
/// per loop turn in the daemon). Before the change each was done whole, in
/// the request's own turn: every test here found no slice left to do.
@Suite struct SlicedWorkTests {
    static let slice = SharedController.sliceBudget
    /// Three slices and a bit: enough that slicing shows, few enough for a debug build.
    static let many = 3 * slice + 100

    /// `count` observations of `object`'s key paths k0, k1, … by `client`.
    private func observeMany(_ fixture: EngineFixture, _ client: ClientController, object: String, count: Int) {
        var start = 0
        while start < count {
            let end = min(count, start + 10_000)
            let keyPaths = (start..<end).map { JSONValue.string("k\($0)") }
            fixture.ok(["op": "observe", "object": .string(object), "keyPaths": .array(keyPaths)], from: client)
            start = end
        }
    }

    /// `count` objects p/00000, p/00001, … each with `v` set.
    private func makeObjects(_ fixture: EngineFixture, _ client: ClientController, count: Int) {
        var start = 0
        while start < count {
            let end = min(count, start + 10_000)
            let ops = (start..<end).map { index -> JSONValue in
                ["op": "set", "object": .string(Self.name(index)), "keyPath": "v", "value": .number(JSONNumber(index))]
            }
            fixture.ok(["op": "batch", "ops": .array(ops)], from: client)
            start = end
        }
    }

    private static func objectName(_ event: JSONValue) -> String? {
        if case .string(let name)? = event.member("object") { return name }
        return nil
    }

    private static func name(_ index: Int) -> String {
        let digits = String(index)
        return "p/" + String(repeating: "0", count: 5 - digits.count) + digits
    }

    @Test func unobserveAllStopsEventsAtOnceAndLeavesTheIndexInSlices() {
        let (fixture, watcher, writer) = EngineFixture.withTwoClients()
        observeMany(fixture, watcher, object: "o", count: Self.many)
        #expect(fixture.shared.observationCount == Self.many)

        fixture.ok(["op": "unobserveAll"], from: watcher)
        #expect(watcher.observationCount == 0)
        #expect(fixture.send(#"{"op":"info"}"#, from: writer).reply["observations"] == 0)
        #expect(fixture.engine.hasSlicedWork, "unregistered whole in the request's turn")
        #expect(fixture.shared.observationCount == Self.many, "none has left the index yet")

        // Gone for events at once, and observed again as if never observed.
        fixture.ok(["op": "set", "object": "o", "keyPath": "k1", "value": 1], from: writer)
        #expect(fixture.take(from: watcher).lines.isEmpty)
        fixture.ok(["op": "observe", "object": "o", "keyPath": "k1", "options": ["new"]], from: watcher)
        fixture.ok(["op": "set", "object": "o", "keyPath": "k1", "value": 2], from: writer)
        let events = fixture.take(from: watcher).events
        #expect(events.count == 1 && events.first?.member("new") == 2, "\(events)")

        let slices = fixture.finishSlicedWork()
        #expect(slices == 4, "\(Self.many) observations at \(Self.slice) a slice")
        #expect(fixture.shared.observationCount == 1)
        #expect(watcher.observationCount == 1)
        fixture.ok(["op": "set", "object": "o", "keyPath": "k1", "value": 3], from: writer)
        #expect(fixture.take(from: watcher).events.count == 1)
    }

    @Test func aClosedClientsObservationsLeaveInSlicesAndTheClientAfterThem() {
        let fixture = EngineFixture()
        let writer = fixture.makeClient()
        weak var gone: ClientController?
        do {
            let closing = fixture.engine.makeClient()
            gone = closing
            observeMany(fixture, closing, object: "o", count: Self.many)
            fixture.engine.closeClient(closing)
        }
        #expect(gone != nil, "the queue keeps the client while its observations are in the index")
        #expect(fixture.shared.observationCount == Self.many)
        // A change reaches none of them (a closed client gets nothing, and no crash).
        fixture.ok(["op": "set", "object": "o", "keyPath": "k1", "value": 1], from: writer)
        #expect(fixture.finishSlicedWork() == 4)
        #expect(fixture.shared.observationCount == 0)
        #expect(gone == nil, "released once its last observation left")
    }

    @Test func initialEventsOverAPrefixOfManyObjectsComeInSlicesAfterTheReply() {
        let (fixture, watcher, writer) = EngineFixture.withTwoClients()
        makeObjects(fixture, writer, count: Self.many)
        let first = fixture.send(#"{"op":"observe","prefix":"p/","keyPath":"v","options":["new","initial"]}"#,
                                 from: watcher)
        #expect(first.reply["ok"] == true)
        #expect(first.events.count < Self.slice, "one slice at most before the reply: \(first.events.count)")
        #expect(first.lines.last?.member("ok") == true, "the reply after the first slice")
        #expect(fixture.engine.hasSlicedWork, "written whole in the request's turn")

        // A change ahead of the cursor goes out live and stands for its object's initial event.
        let last = Self.name(Self.many - 1)
        fixture.ok(["op": "set", "object": .string(last), "keyPath": "v", "value": -1], from: writer)
        let live = fixture.take(from: watcher).events
        #expect(live.count == 1 && live.first?.member("object") == .string(last) && live.first?.member("new") == -1,
                "\(live)")

        let slices = fixture.finishSlicedWork()
        #expect(slices >= 3)
        let all = first.events + fixture.take(from: watcher).events
        let objects = all.compactMap(Self.objectName)
        #expect(objects == (0..<(Self.many - 1)).map(Self.name), "every other object once, in list order")
        let seq = all.first?.member("seq")
        #expect(all.allSatisfy { $0.member("seq") == seq }, "each carries the request's seq")
    }

    @Test func unobservingDuringSlicesDropsTheRestOfTheInitialEvents() {
        let (fixture, watcher, writer) = EngineFixture.withTwoClients()
        makeObjects(fixture, writer, count: Self.many)
        _ = fixture.send(#"{"op":"observe","prefix":"p/","keyPath":"v","options":["new","initial"]}"#, from: watcher)
        fixture.ok(["op": "unobserve", "prefix": "p/", "keyPath": "v"], from: watcher)
        #expect(fixture.finishSlicedWork() <= 1)
        #expect(fixture.take(from: watcher).lines.isEmpty)
    }

    @Test func aClientThatFallsBehindDuringSlicesDrainsTheRestInOrder() {
        let (fixture, watcher, writer) = EngineFixture.withTwoClients()
        makeObjects(fixture, writer, count: Self.many)
        var events = fixture.send(#"{"op":"observe","prefix":"p/","keyPath":"v","options":["new","initial"]}"#,
                                  from: watcher).events
        // The client stops reading: the next slice fills its allowance and congests it.
        watcher.outputAllowance = 4_096
        _ = fixture.finishSlicedWork()
        #expect(watcher.isCongested)
        #expect(!fixture.engine.hasSlicedWork, "the rest waits for the drain, not for slices")
        watcher.outputAllowance = nil
        while true {
            events += fixture.take(from: watcher).events
            guard watcher.isCongested else { break }
            watcher.markDrained()
        }
        let objects = events.compactMap(Self.objectName)
        #expect(objects == (0..<Self.many).map(Self.name))
    }
}
