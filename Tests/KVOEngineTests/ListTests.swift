import KVOValues
import Testing
@testable import KVOEngine

/// Issue 13, point 4: `list`, and the ordered index under it.
@Suite final class ListTests {
    let (fixture, client) = EngineFixture.withClient()

    private func create(_ names: [String]) {
        for name in names {
            fixture.ok(["op": "set", "object": .string(name), "keyPath": "k", "value": 1], from: client)
        }
    }

    private func list(_ request: JSONObject) -> (names: [String], more: Bool) {
        var members: JSONObject = ["op": "list"]
        for (key, value) in request { members[key] = value }
        let reply = fixture.ok(.object(members), from: client).reply
        guard case .array(let names)? = reply.member("objects"), case .bool(let more)? = reply.member("more") else {
            Issue.record("no objects/more in \(reply)")
            return ([], false)
        }
        #expect(reply.member("seq") == .number(JSONNumber(Int(fixture.seq))))
        return (names.compactMap { if case .string(let s) = $0 { s } else { nil } }, more)
    }

    @Test func listReturnsNamesUnderThePrefixInByteOrder() {
        create(["b", "s/é", "s/z", "s/a", "s/Z", "s", "t"])
        #expect(list([:]).names == ["b", "s", "s/Z", "s/a", "s/z", "s/é", "t"])
        #expect(list(["prefix": "s/"]).names == ["s/Z", "s/a", "s/z", "s/é"])
        #expect(list(["prefix": "s/", "after": "s/a"]).names == ["s/z", "s/é"])
        #expect(list(["prefix": "s/", "after": "r"]).names == ["s/Z", "s/a", "s/z", "s/é"])
        #expect(list(["prefix": "s/", "after": "u"]).names == [])
        #expect(list(["prefix": "nothing"]).names == [])
    }

    @Test func moreIsTrueExactlyWhenAnotherNameFollows() {
        create(["p/1", "p/2", "p/3", "q"])
        #expect(list(["prefix": "p/", "limit": 2]) == (["p/1", "p/2"], true))
        #expect(list(["prefix": "p/", "limit": 3]) == (["p/1", "p/2", "p/3"], false))
        #expect(list(["prefix": "p/", "limit": 2, "after": "p/2"]) == (["p/3"], false))
    }

    @Test func deletedObjectsLeaveTheListAndEmptiedOnesStay() {
        create(["a", "b"])
        fixture.ok(["op": "delete", "object": "a"], from: client)
        fixture.ok(["op": "delete", "object": "b", "keyPath": "k"], from: client)
        #expect(list([:]).names == ["b"])
    }

    @Test func pagingThroughManyNamesNeverSkipsOrRepeats() {
        let names = (0..<3000).map { "n/\(String($0, radix: 7))" }
        create(names.shuffled())
        var seen: [String] = []
        var after: String?
        while true {
            var request: JSONObject = ["prefix": "n/", "limit": 128]
            if let after { request["after"] = .string(after) }
            let page = list(request)
            seen += page.names
            after = page.names.last
            guard page.more else { break }
        }
        #expect(seen == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test func badLimitsAndFieldsAreRefused() {
        fixture.fails(["op": "list", "limit": 10_001], from: client, code: "limit_exceeded")
        fixture.fails(["op": "list", "limit": 0], from: client, code: "bad_request")
        fixture.fails(["op": "list", "limit": "5"], from: client, code: "bad_request")
        fixture.fails(["op": "list", "after": 5], from: client, code: "bad_request")
        fixture.fails(["op": "list", "object": "x"], from: client, code: "bad_request")
        fixture.fails(["op": "list", "prefix": .string(String(repeating: "x", count: 1025))], from: client,
                      code: "limit_exceeded")
        fixture.fails(["op": "get", "object": "x", "limit": 3], from: client, code: "bad_request")
    }

    @Test func nameIndexAgreesWithASortedArrayUnderRandomChanges() {
        var index = NameIndex()
        var reference = Set<String>()
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let name = "k\(Int.random(in: 0..<3000, using: &random))"
            if Bool.random(using: &random) {
                index.insert(name)
                reference.insert(name)
            } else {
                index.remove(name)
                reference.remove(name)
            }
        }
        var all: [String] = []
        index.forEach(prefix: "", after: nil) { all.append($0); return true }
        #expect(all == reference.sorted(by: CanonicalName.precedes))
        #expect(index.count == reference.count)
    }

    @Test func prefixTrieFindsEveryPrefixOfANameAndForgetsRemovedOnes() {
        final class Box { let name: String; init(_ name: String) { self.name = name } }
        let trie = PrefixTrie<Box>()
        let prefixes = ["", "a", "ab", "abc", "abd", "b", "abcdef", "x/y"]
        for prefix in prefixes { trie.set(Box(prefix), for: prefix) }
        func matches(_ name: String) -> [String] {
            var found: [String] = []
            trie.forEachMatch(of: name) { found.append($0.name) }
            return found
        }
        #expect(matches("abcde") == ["", "a", "ab", "abc"])
        #expect(matches("abdz") == ["", "a", "ab", "abd"])
        #expect(matches("x/y/z") == ["", "x/y"])
        #expect(matches("q") == [""])
        trie.removeValue(for: "ab")
        trie.removeValue(for: "")
        trie.removeValue(for: "abc")
        #expect(matches("abcdefg") == ["a", "abcdef"])
        #expect(trie.count == 5)
        #expect(trie.value(for: "ab") == nil && trie.value(for: "abd")?.name == "abd")
        for prefix in prefixes { trie.removeValue(for: prefix) }
        #expect(trie.isEmpty && trie.all.isEmpty)
    }
}
