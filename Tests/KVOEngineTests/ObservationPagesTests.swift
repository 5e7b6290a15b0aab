import KVOTestSupport
import KVOValues
import Testing
@testable import KVOEngine

/// `observations` in pages: oldest first, from the `next` of the previous
/// page, bounded by `limit` and by bytes.
@Suite final class ObservationPagesTests {
    let (fixture, client) = EngineFixture.withClient()

    /// "object key" or "prefix key" for each entry, as a set of names to compare.
    private static func names(_ reply: JSONValue) -> [String] {
        guard case .array(let entries)? = reply.member("observations") else { return [] }
        return entries.map { entry in
            let scope = entry.member("object").map { "object \($0.stringValue ?? "")" }
                ?? "prefix \(entry.member("prefix")?.stringValue ?? "")"
            return scope + " " + (entry.member("keyPath")?.stringValue ?? "(document)")
        }
    }

    private func page(after next: JSONValue?, limit: Int? = nil) -> JSONValue {
        var request: JSONObject = ["op": "observations"]
        if let next { request["after"] = next }
        if let limit { request["limit"] = .number(JSONNumber(limit)) }
        return fixture.ok(.object(request), from: client).reply
    }

    @Test func pagesListEveryObservationOnceOldestFirst() {
        var made: [String] = []
        for index in 0..<2_500 {
            let keyPath = index % 5 == 0 ? ObservedPath.wholeDocument : ObservedPath(components: ["k\(index % 7)"])
            let scope: ObservationScope = index % 3 == 0 ? .prefix("p\(index)/") : .object("o\(index)")
            client.observe(scope, keyPath: keyPath, options: [], context: nil)
            made.append("\(scope.isPrefix ? "prefix" : "object") \(scope.name) \(keyPath.isWholeDocument ? "(document)" : keyPath.description)")
        }
        var listed: [String] = []
        var next: JSONValue?
        var sizes: [Int] = []
        repeat {
            let reply = page(after: next)
            listed += Self.names(reply)
            sizes.append(Self.names(reply).count)
            next = reply.member("next")
            #expect((next != nil) == (reply.member("more") == true), "next comes with more, and only then")
        } while next != nil
        #expect(sizes == [1000, 1000, 500], "the default limit is 1000")
        #expect(listed == made)
    }

    @Test func observationsMadeOrEndedBetweenPagesLeaveTheOthersListedOnce() {
        for index in 0..<30 { client.observe("o\(index)", keyPath: keyPath("k"), options: [], context: nil) }
        let first = page(after: nil, limit: 10)
        #expect(Self.names(first) == (0..<10).map { "object o\($0) k" })
        // Ended: one already listed and one not yet; made: one new.
        client.unobserve("o3")
        client.unobserve("o15")
        client.observe("late", keyPath: keyPath("k"), options: [], context: nil)
        // Made again after it ended: it is a new observation, listed with the new ones.
        client.observe("o3", keyPath: keyPath("k"), options: [], context: nil)
        var listed = Self.names(first)
        var next = first.member("next")
        while let cursor = next {
            let reply = page(after: cursor, limit: 10)
            listed += Self.names(reply)
            next = reply.member("next")
        }
        let expected = (0..<30).filter { $0 != 15 }.map { "object o\($0) k" } + ["object late k", "object o3 k"]
        #expect(listed == expected)
    }

    @Test func aPageStopsOnceItsEntriesPassAMebibyte() {
        let context = JSONValue.string(String(repeating: "c", count: 100_000))
        for index in 0..<30 { client.observe("o\(index)", keyPath: keyPath("k"), options: [], context: context) }
        let reply = page(after: nil)
        let count = Self.names(reply).count
        #expect(count == 11, "10 entries of 100 kB are under 1 MiB; the 11th takes the page past it")
        #expect(reply.member("more") == true)
        #expect(Self.names(page(after: reply.member("next"))).count == 11)
    }

    @Test func limitAndCursorAreChecked() {
        client.observe("o", keyPath: keyPath("k"), options: [], context: nil)
        fixture.fails(["op": "observations", "limit": 10_001], from: client, code: "limit_exceeded")
        fixture.fails(["op": "observations", "limit": 0], from: client, code: "bad_request")
        for cursor: JSONValue in [7, "x", "-1", "", ["object": "o"]] {
            let reply = fixture.fails(["op": "observations", "after": cursor], from: client, code: "bad_request").reply
            #expect(reply.errorMessage?.contains(#"field "after""#) == true, "\(reply)")
        }
        let all = page(after: nil, limit: 10_000)
        #expect(Self.names(all) == ["object o k"] && all.member("more") == false && all.member("next") == nil)
        #expect(Self.names(page(after: "0")).isEmpty, "nothing was made after the first")
    }
}

/// The creation order a client with many observations keeps, against the
/// pass over its table that a client with few makes: the same pages.
@Suite struct CreationOrderTests {
    let fixture = EngineFixture()

    /// The client's observations after `after`, oldest first, from its table.
    private static func reference(_ client: ClientController, after: UInt64?) -> [ObservationInfo] {
        client.infos.elements.filter { info in after.map { info.serial > $0 } ?? true }.sorted { $0.serial < $1.serial }
    }

    @Test func pagesStayTheTablesOwnThroughChurnAcrossTheThresholds() {
        let client = fixture.makeClient()
        var random = SplitMix64(seed: 8)
        var observed: [String] = []
        var orderSeen = Set<Bool>()
        for step in 0..<90 {
            // Up past the threshold (to about 10,000), down below the lower
            // one, up again; ending observations all the while.
            let growing = step < 30 || step >= 60
            for _ in 0..<Int.random(in: 1...700, using: &random) {
                if observed.isEmpty || Int.random(in: 0..<4, using: &random) < (growing ? 3 : 1) {
                    let name = "o\(Int.random(in: 0..<5_000, using: &random))"
                    let path = "k\(Int.random(in: 0..<5, using: &random))"
                    if client.observe(name, keyPath: keyPath(path), options: [], context: nil) != nil {
                        observed.append("\(name) \(path)")
                    }
                } else if Int.random(in: 0..<10, using: &random) == 0 {
                    // A whole object at once.
                    let name = observed[Int.random(in: 0..<observed.count, using: &random)].split(separator: " ")[0]
                    client.unobserve(String(name))
                    observed.removeAll { $0.hasPrefix("\(name) ") }
                } else {
                    let index = Int.random(in: 0..<observed.count, using: &random)
                    let parts = observed.remove(at: index).split(separator: " ")
                    client.unobserve(String(parts[0]), keyPath: keyPath(String(parts[1])))
                }
            }
            orderSeen.insert(client.creationOrder != nil)
            #expect(client.observationCount == observed.count)
            let all = Self.reference(client, after: nil)
            for after in [nil, all.randomElement(using: &random)?.serial, all.first.map { max($0.serial, 1) - 1 }, UInt64.max] {
                let limit = Int.random(in: 1...300, using: &random)
                let (page, more) = client.observations(after: after, limit: limit)
                let expected = Self.reference(client, after: after)
                let same = page.map(ObjectIdentifier.init) == expected.prefix(limit).map(ObjectIdentifier.init)
                #expect(same && more == (expected.count > limit), "step \(step), after \(String(describing: after))")
            }
        }
        #expect(orderSeen == [true, false], "both ways of paging were exercised")
    }
}
