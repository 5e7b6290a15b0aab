import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33 item 3: the requests a client sent behind its changes over etcd
/// wait, decoded, until those changes are committed; they are memory kvod
/// keeps for that client, so they count in the memory account, and leave it
/// once answered or once the client is gone.
extension ReplicationTests {
    @Test func requestsWaitingBehindAChangeInFlightCountInTheMemoryAccountUntilAnswered() throws {
        fixture.engine.pipelinesChanges = true
        let large = JSONValue.string(String(repeating: "x", count: 100_000))
        let before = fixture.engine.memoryEstimate
        for id in 0..<4 {
            _ = fixture.send(["op": "set", "id": .number(JSONNumber(id)), "object": "o", "keyPath": "a",
                              "value": large], from: writer)
        }
        #expect(endTurn(reading: writer))
        // Read while the four are in flight: they wait behind them.
        for id in 4..<8 {
            _ = fixture.send(["op": "set", "id": .number(JSONNumber(id)), "object": "p", "keyPath": "b",
                              "value": large], from: writer)
        }
        _ = fixture.send(["op": "get", "id": 8, "object": "o"], from: writer)
        let waiting = fixture.engine.shared.waitingRequestBytes
        #expect(waiting >= 8 * 2 * 100_000, "eight 100 KB values held twice over: \(waiting)")
        #expect(fixture.engine.memoryEstimate - before >= waiting)
        let info = fixture.send(["op": "info"], from: watcher).reply
        #expect(info.member("memory")?.member("requests")?.intValue == waiting)

        // The first four commit; the next four are proposed in their turn, and only then is nothing left waiting.
        replicator.deliverBatch(into: fixture.engine, at: 10)
        #expect(fixture.engine.shared.waitingRequestBytes >= 4 * 2 * 100_000,
                "the four behind are in flight now: \(fixture.engine.shared.waitingRequestBytes)")
        replicator.deliverBatch(into: fixture.engine, at: 11)
        #expect(fixture.take(from: writer).replies.map { $0.member("id") } == (0...8).map { .number(JSONNumber($0)) })
        #expect(fixture.engine.shared.waitingRequestBytes == 0)
    }

    @Test func aClientThatGoesAwayWithRequestsWaitingLeavesNothingInTheAccount() throws {
        fixture.engine.pipelinesChanges = true
        let large = JSONValue.string(String(repeating: "y", count: 50_000))
        let leaving = fixture.makeClient()
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "a", "value": large], from: leaving)
        #expect(endTurn(reading: leaving))
        _ = fixture.send(["op": "set", "object": "o", "keyPath": "b", "value": large], from: leaving)
        _ = fixture.send(["op": "insert", "object": "o", "keyPath": "c", "value": large], from: leaving)
        #expect(fixture.engine.shared.waitingRequestBytes >= 3 * 2 * 50_000)
        fixture.engine.closeClient(leaving)
        #expect(fixture.engine.shared.waitingRequestBytes >= 2 * 50_000, "the one in flight is held until its outcome")
        replicator.answer(.unavailable("etcd unreachable"))
        #expect(fixture.engine.shared.waitingRequestBytes == 0)
    }
}
