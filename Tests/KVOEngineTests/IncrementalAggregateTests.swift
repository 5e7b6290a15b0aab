import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// Issue 33, row 3: a change to an observed array costs its own elements,
/// not a pass over the array, for every operator, in an object's and a
/// prefix's tree; a pass is made once when the array is first seen or set
/// as a whole. Passes are counted (``SharedController/lastChangeArrayPasses``),
/// never timed.
@Suite final class IncrementalAggregateTests {
    let (fixture, writer, observer) = EngineFixture.withTwoClients()

    /// Handles `request` from the writer, leaving its reply where it is (a
    /// pipelined request), and returns the passes over an array it made.
    private func passes(_ request: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        fixture.handle(request.jsonString, from: writer)
        var bytes: [UInt8] = []
        writer.takeOutput(into: &bytes)
        let reply = WireOutput(parsing: bytes).reply
        #expect(reply.member("ok") == true, "\(request.jsonString) → \(reply.jsonString)", sourceLocation: sourceLocation)
        return fixture.shared.lastChangeArrayPasses
    }

    @Test func aPrefixSumObserverMakesAtMostOnePassPerObjectOver500PipelinedInserts() {
        let objects = ["p/a", "p/b", "p/c"]
        for object in objects {
            fixture.ok(["op": "set", "object": .string(object), "keyPath": "v",
                        "value": .array((0..<5_000).map { .number(JSONNumber($0)) })], from: writer)
        }
        fixture.ok(["op": "observe", "prefix": "p/", "keyPath": "v.@sum", "options": ["new", "old"]], from: observer)
        var total = 0
        for index in 0..<500 {
            let object = objects[index % objects.count]
            total += passes(["op": "insert", "object": .string(object), "keyPath": "v", "value": 1])
        }
        #expect(total <= objects.count, "\(total) passes for 500 inserts into \(objects.count) arrays")
        let events = fixture.take(from: observer).events
        #expect(events.count == 500)
        let base = 5_000 * 4_999 / 2
        for object in objects {
            let inserted = (0..<500).filter { objects[$0 % objects.count] == object }.count
            let last = events.last { $0.member("object") == .string(object) }
            #expect(last?.member("new") == .number(JSONNumber(base + inserted)), "\(object)")
            expectJSON(fixture.value(object, "v.@sum"), .number(JSONNumber(base + inserted)))
        }
    }

    @Test(arguments: ["v.@avg", "v.@sum"])
    func anInsertIntoABigArrayOfNonIntegersMakesNoPassAfterTheFirst(path: String) {
        let elements: [JSONValue] = (0..<20_000).map { .number(JSONNumber(validatedLiteral: "\($0).25")) }
        fixture.ok(["op": "set", "object": "o", "keyPath": "v", "value": .array(elements)], from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPath": .string(path), "options": ["new", "old"]],
                   from: observer)
        // The first change after the observe sees the array for the first time: one pass.
        #expect(passes(["op": "insert", "object": "o", "keyPath": "v", "value": number("0.5")]) <= 1)
        var total = 0
        for index in 0..<50 {
            total += passes(["op": "insert", "object": "o", "keyPath": "v", "index": .number(JSONNumber(index)),
                             "value": number("\(index).125")])
            total += passes(["op": "remove", "object": "o", "keyPath": "v", "index": 3])
            total += passes(["op": "replace", "object": "o", "keyPath": "v", "index": 9, "value": number("-1.5")])
        }
        #expect(total == 0)
        let events = fixture.take(from: observer).events
        #expect(events.count == 151)
        expectJSON(events.last?.member("new"), fixture.value("o", path) ?? .null)
    }

    @Test func minAndMaxFollowRemovalsOfTheExtremeWithABoundedNumberOfPasses() {
        var rng = SplitMix64(seed: 33)
        var model = Array(0..<2_000).shuffled(using: &rng)
        fixture.ok(["op": "set", "object": "o", "keyPath": "v", "value": .array(model.map { .number(JSONNumber($0)) })],
                   from: writer)
        fixture.ok(["op": "observe", "object": "o", "keyPaths": ["v.@min", "v.@max"], "options": ["new"]],
                   from: observer)
        let removals = 600
        var total = 0
        for round in 0..<removals {
            let extreme = round.isMultiple(of: 2) ? model.min()! : model.max()!
            let index = model.firstIndex(of: extreme)!
            model.remove(at: index)
            total += passes(["op": "remove", "object": "o", "keyPath": "v", "index": .number(JSONNumber(index))])
            let events = fixture.take(from: observer).events
            let byPath = Dictionary(grouping: events) { $0.eventKeyPath ?? "" }
            #expect(byPath["v.@min"]?.last?.member("new") == .number(JSONNumber(model.min()!)))
            #expect(byPath["v.@max"]?.last?.member("new") == .number(JSONNumber(model.max()!)))
        }
        // Each node: one pass when the array is first seen, then at most one
        // per reserve's worth of removals of its extreme.
        let bound = 2 * (1 + removals / 2 / CollectionAggregate.reserveLimit + 1)
        #expect(total <= bound, "\(total) passes for \(removals) removals of an extreme (bound \(bound))")
    }

    @Test func aKeptAggregateIsDroppedWithItsObjectAndNotReusedForAnotherOfTheSameName() {
        fixture.ok(["op": "set", "object": "p/x", "keyPath": "v", "value": [1, 2, 3]], from: writer)
        fixture.ok(["op": "observe", "prefix": "p/", "keyPath": "v.@max", "options": ["new"]], from: observer)
        _ = passes(["op": "insert", "object": "p/x", "keyPath": "v", "value": 10])
        _ = passes(["op": "delete", "object": "p/x"])
        // A new object of the same name, its array inserted into from nothing.
        _ = passes(["op": "insert", "object": "p/x", "keyPath": "v", "value": 4])
        _ = passes(["op": "insert", "object": "p/x", "keyPath": "v", "value": 2])
        let news = fixture.take(from: observer).events.map { $0.member("new") }
        #expect(news == [10, .null, 4, 4])
    }

    // MARK: Differential

    /// The operators and element paths every random run observes.
    static let paths = ["v.@count", "v.@sum", "v.@avg", "v.@min", "v.@max",
                        "v.@sum.x", "v.@avg.x", "v.@min.x", "v.@max.x"]

    /// Numbers chosen to collide: one value in several spellings, doubles
    /// whose sum depends on the order it is taken in, integers near the
    /// 64-bit limit, huge doubles that overflow together.
    static let literals = ["0", "-0", "1", "1.0", "1e0", "2", "-3", "7", "0.1", "0.2", "0.3", "-0.25", "2.5",
                           "1e16", "-1e16", "3.0e-5", "9223372036854775807", "9223372036854775806",
                           "-9223372036854775808", "1.5e308", "-1.5e308", "5e-324"]

    static func randomElement(_ rng: inout SplitMix64) -> JSONValue {
        let literal = literals[Int(rng.next() % UInt64(literals.count))]
        switch rng.next() % 10 {
        case 0: return "s"
        case 1: return .null
        case 2, 3, 4: return ["x": .number(JSONNumber(validatedLiteral: literal))]
        default: return .number(JSONNumber(validatedLiteral: literal))
        }
    }

    /// A random change of `object`'s array (modelled in `model`; nil: no
    /// array), or of what surrounds it.
    static func randomChange(of object: String, _ model: inout [JSONValue]?, _ rng: inout SplitMix64) -> JSONValue {
        let name = JSONValue.string(object)
        let count = model?.count ?? 0
        let roll = rng.next() % 100
        switch roll {
        case 0..<35:
            let values = (0..<(1 + Int(rng.next() % 3))).map { _ in randomElement(&rng) }
            let index = Int(rng.next() % UInt64(count + 1))
            model = (model ?? [])
            model!.insert(contentsOf: values, at: index)
            return ["op": "insert", "object": name, "keyPath": "v", "index": .number(JSONNumber(index)),
                    "values": .array(values)]
        case 35..<55 where count > 0:
            let index = extremeIndex(of: model!, least: roll < 45)
            model!.remove(at: index)
            return ["op": "remove", "object": name, "keyPath": "v", "index": .number(JSONNumber(index))]
        case 55..<75 where count > 0:
            let indexes = Set((0..<(1 + Int(rng.next() % 2))).map { _ in Int(rng.next() % UInt64(count)) }).sorted()
            model!.removeElements(atSortedIndexes: indexes)
            return ["op": "remove", "object": name, "keyPath": "v", "indexes": .array(indexes.map { .number(JSONNumber($0)) })]
        case 75..<90 where count > 0:
            let index = Int(rng.next() % UInt64(count))
            let value = randomElement(&rng)
            model![index] = value
            return ["op": "replace", "object": name, "keyPath": "v", "index": .number(JSONNumber(index)), "value": value]
        case 90..<95:
            let length = rng.next() % 4 == 0 ? 150 + Int(rng.next() % 150) : Int(rng.next() % 8)
            let values = (0..<length).map { _ in randomElement(&rng) }
            model = values
            return ["op": "set", "object": name, "keyPath": "v", "value": .array(values)]
        case 95..<98:
            return ["op": "set", "object": name, "keyPath": "w", "value": randomElement(&rng)]
        default:
            model = nil
            return ["op": "delete", "object": name]
        }
    }

    /// The index of the least (or greatest) number among `elements` at the
    /// top level, so that a reserve of extremes is used up; else a random-ish one.
    static func extremeIndex(of elements: [JSONValue], least: Bool) -> Int {
        var found: (index: Int, value: Double)?
        for (index, element) in elements.enumerated() {
            guard case .number(let number) = element, let value = number.doubleValue else { continue }
            if found.map({ least ? value < $0.value : value > $0.value }) ?? true { found = (index, value) }
        }
        return found?.index ?? elements.count / 2
    }

    @Test(arguments: zip([false, false, false, true, true, true], [1, 2, 3, 4, 5, 6] as [UInt64]))
    func randomChangesGiveEveryOperatorTheValueOfAFreshComputationLiveAndReplayed(prefix: Bool, seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let objects = prefix ? ["p/a", "p/b"] : ["p/a"]
        var models: [String: [JSONValue]?] = [:]
        for object in objects {
            let values = (0..<(100 + Int(rng.next() % 100))).map { _ in Self.randomElement(&rng) }
            models[object] = values
            fixture.ok(["op": "set", "object": .string(object), "keyPath": "v", "value": .array(values)], from: writer)
        }
        let scope: (String, JSONValue) = prefix ? ("prefix", "p/") : ("object", "p/a")
        let keyPaths = JSONValue.array(Self.paths.map { .string($0) })
        let startSeq = fixture.seq
        fixture.ok([scope.0: scope.1, "op": "observe", "keyPaths": keyPaths, "options": ["new", "old"]], from: observer)
        var last: [String: JSONValue] = [:]
        for object in objects {
            for path in Self.paths { last[object + " " + path] = fixture.value(object, path) }
        }
        var liveText: [String] = []
        for _ in 0..<400 {
            let object = objects[Int(rng.next() % UInt64(objects.count))]
            var model = models[object]!
            let request = Self.randomChange(of: object, &model, &rng)
            models[object] = model
            fixture.ok(request, from: writer)
            let output = fixture.take(from: observer)
            liveText += output.text
            for event in output.events {
                guard case .string(let eventObject)? = event.member("object"), let path = event.eventKeyPath else {
                    Issue.record("event without object or keyPath: \(event.jsonString)")
                    continue
                }
                let fresh = fixture.value(eventObject, path) ?? .null
                expectJSON(event.member("new") ?? .null, fresh)
                expectJSON(event.member("old") ?? .null, last[eventObject + " " + path] ?? .null)
                last[eventObject + " " + path] = fresh
                if fresh != (event.member("new") ?? .null) {
                    Issue.record("seed \(seed) after \(request.jsonString): \(path) of \(eventObject)")
                    return
                }
            }
        }
        let replayer = fixture.makeClient()
        let replayed = fixture.ok([scope.0: scope.1, "op": "observe", "keyPaths": keyPaths, "options": ["new", "old"],
                                   "since": .number(JSONNumber(Int(startSeq)))], from: replayer)
        let replayedText = zip(replayed.lines, replayed.text).filter { $0.0.isEvent }.map(\.1)
        #expect(replayedText == liveText)
    }
}

/// A JSON number from its literal (the value literals take integers only).
private func number(_ literal: String) -> JSONValue {
    .number(JSONNumber(validatedLiteral: literal))
}
