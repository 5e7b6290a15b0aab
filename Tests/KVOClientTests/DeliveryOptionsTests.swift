import KVOClient
import KVOTestSupport
import Testing

/// `DeliveryOptions` (quiet observers) against the real kvod: each setting
/// reaches the daemon (`observations` lists it) and changes what the observer gets.
@Suite(.onDedicatedThread) struct DeliveryOptionsTests {
    @Test func aDistinctStreamDoesNotGetASetOfAnEqualValue() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let stream = connection.changes(of: "sensor", keyPath: "state", options: [.new],
                                        delivery: DeliveryOptions(distinct: true))
        var changes = stream.makeAsyncIterator()
        let first = try await connection.set("sensor", "state", to: "ok")
        _ = try await connection.set("sensor", "state", to: "ok")
        let third = try await connection.set("sensor", "state", to: "failing")
        let seen = [try await changes.next(), try await changes.next()]
        #expect(seen.map { $0?.seq } == [first, third], "the set of an equal value was sent")
        #expect(seen.map { $0?.new } == ["ok", "failing"])
        let records = try await connection.observations()
        #expect(records.map(\.delivery) == [DeliveryOptions(distinct: true)])
    }

    @Test func aControllerWithKindsGetsOnlyThoseKinds() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let observer = RecordingObserver()
        let controller = KVOController(observer: observer, connection: connection)
        controller.observe("queue", keyPath: "jobs", options: [.new],
                           delivery: DeliveryOptions(kinds: [.insertion, .removal])) { observer, _, change in
            observer.changes.append(change)
        }
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await connection.set("queue", "jobs", to: ["a"])
        let insert = try await connection.insert("queue", "jobs", ["b"])
        try await connection.replace("queue", "jobs", at: [0], with: ["z"])
        let remove = try await connection.remove("queue", "jobs", at: [0])
        try await connection.set("queue", "jobs", to: [])
        let end = try await connection.insert("queue", "jobs", ["end"])
        let changes = try await observer.changes.waitForCount(3)
        #expect(changes.map(\.kind) == [.insertion, .removal, .insertion])
        #expect(changes.map(\.seq) == [insert, remove, end])
        #expect(try await connection.observations().first?.delivery.kinds == [.insertion, .removal])
        _ = controller
    }

    @Test func aThrottledStreamGetsTheFirstChangeAndThenTheLatestWithCoalesced() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        let stream = connection.changes(of: "job/7", keyPath: "done", options: [.new],
                                        delivery: DeliveryOptions(throttle: .milliseconds(200)))
        var changes = stream.makeAsyncIterator()
        // 100 changes in one request: far quicker than the interval.
        let result = try await connection.batch((1...100).map { .set("job/7", "done", to: .number(JSONNumber($0))) })
        let first = try await changes.next()
        let folded = try await changes.next()
        #expect(first?.new == 1 && first?.coalesced == nil)
        #expect(folded?.new == 100 && folded?.seq == result.seq)
        #expect(folded?.coalesced == 98, "the folded change stands for the 98 between the first and the last")
        let record = try await connection.observations().first
        #expect(record?.delivery.throttle == .milliseconds(200))
    }

    @Test func aFinerThrottleIsRoundedUpAndOneBeyondTheLimitIsRefusedByKvod() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var fine = connection.changes(of: "o", keyPath: "fine", delivery: DeliveryOptions(throttle: .microseconds(1500)))
            .makeAsyncIterator()
        try await connection.set("o", "fine", to: 1)
        #expect(try await fine.next()?.seq != nil)
        #expect(try await connection.observations().first?.delivery.throttle == .milliseconds(2))

        var tooLong = connection.changes(of: "o", keyPath: "long", delivery: DeliveryOptions(throttle: .seconds(3601)))
            .makeAsyncIterator()
        try await connection.set("o", "long", to: 1)
        do {
            let change = try await tooLong.next()
            Issue.record("a throttle over an hour was observed: \(String(describing: change))")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.contains("3600000"), "\(error.message)")
        }
    }

    @Test func aSecondObserverOfTheKeyPathWithOtherDeliveryOnOneConnectionFailsWithBadRequest() async throws {
        let kvod = try await KVODProcess()
        let connection = try connect(kvod)
        var all = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        var distinct = connection.changes(of: "o", keyPath: "k", options: [.new],
                                          delivery: DeliveryOptions(distinct: true)).makeAsyncIterator()
        do {
            _ = try await distinct.next()
            Issue.record("an observer with other delivery options shared the observation")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.contains("other delivery options"), "\(error.message)")
        }
        let seq = try await connection.set("o", "k", to: 1)
        #expect(try await all.next()?.seq == seq, "the first observer goes on")
        var same = connection.changes(of: "o", keyPath: "k", options: [.new]).makeAsyncIterator()
        let next = try await connection.set("o", "k", to: 2)
        #expect(try await same.next()?.seq == next, "an observer with the same delivery shares it")
    }
}
