@testable import KVOEngine
import Testing

/// Sets as KVOClient writes them (`{"op":"set","object","keyPath","value"}`,
/// no id, no space), and the same sets spelled otherwise: all of them are
/// plain sets of the one pass (no ``Fields``), decoded as the full reader
/// decodes them. (A special path for the canonical layout alone was removed
/// in issue 16: one pass reads every spelling.)
@Suite struct CanonicalSetTests {
    private static func isPlainSet(_ line: [UInt8]) -> Bool {
        var fields = Fields()
        guard case .plainSet = line.withUnsafeBytes({ RequestScanner.scan($0, into: &fields) as RequestScanner.Scan })
        else { return false }
        return true
    }

    static let corpus: [String] = [
        #"{"op":"set","object":"person/1","keyPath":"name","value":"xsc"}"#,
        #"{"op":"set","object":"o","keyPath":"a.b.c","value":{"x":[1,2.5,-3e2,true,null]}}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":12345678901234567890123}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"caf\u00e9 \"q\""}"#,
        #"{"op":"set","object":"","keyPath":"a","value":1}"#,
        #"{"op":"set","object":"o","keyPath":"","value":1}"#,
        #"{"op":"set","object":"o","keyPath":"a..b","value":1}"#,
        #"{"op":"set","object":"o","keyPath":".a","value":null}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":[[[[]]]]}  "#,
        #"{"op":"set","object":"o","keyPath":"a","value":true}"#,
        "{\"op\":\"set\",\"object\":\"" + String(repeating: "n", count: 1025) + "\",\"keyPath\":\"a\",\"value\":1}",
        "{\"op\":\"set\",\"object\":\"o\",\"keyPath\":\"" + String(repeating: "k", count: 4097) + "\",\"value\":1}",
    ]

    @Test func canonicalSetsTakeThePlainSetPathAndDecodeAsTheFullReaderDoes() {
        for line in Self.corpus {
            let bytes = Array(line.utf8)
            #expect(Self.isPlainSet(bytes), "\(line.prefix(80))")
            #expect(RequestSpellingTests.outcome(bytes) == RequestSpellingTests.outcome(bytes, scanning: false),
                    "\(line.prefix(80))")
        }
    }

    @Test func otherSpellingsOfASetArePlainSetsToo() {
        for line in [#"{"object":"o","op":"set","keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"id":1}"#,
                     #"{"id":"r1","op":"set","object":"o","keyPath":"a","value":1}"#,
                     #"{"op": "set", "object": "o", "keyPath": "a", "value": 1, "id": 7}"#,
                     #"{"op":"set","object":"\u006f","keyPath":"\u0061","value":1}"#,
                     #"{"op":"set","object":"o","value":{"a":1}}"#] {
            let bytes = Array(line.utf8)
            #expect(Self.isPlainSet(bytes), "\(line)")
            #expect(RequestSpellingTests.outcome(bytes) == RequestSpellingTests.outcome(bytes, scanning: false), "\(line)")
        }
    }

    @Test func setsWithConditionsOrLifetimesOrBadMembersAreNot() {
        for line in [#"{"op":"set","object":"o","keyPath":"a","value":1,"ttl":5}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"ifModSeq":0}"#,
                     #"{"op":"set","object":1,"keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":["a"],"value":1}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1"#] {
            #expect(!Self.isPlainSet(Array(line.utf8)), "\(line)")
        }
    }

    @Test func plainSetsAgreeWithTheFullReaderOnMutatedLines() {
        var mutator = LineMutator(seed: 0xca70_71ca)
        var plainSets = 0
        for round in 0..<50_000 {
            let bytes = mutator.mutated(Self.corpus[round % Self.corpus.count])
            if Self.isPlainSet(bytes) { plainSets += 1 }
            let viaOnePass = RequestSpellingTests.outcome(bytes)
            let viaFullReader = RequestSpellingTests.outcome(bytes, scanning: false)
            #expect(viaOnePass == viaFullReader, "\(String(decoding: bytes, as: UTF8.self).prefix(120))")
            if viaOnePass != viaFullReader { return }
        }
        // The comparison means something only if many mutated lines were plain sets.
        #expect(plainSets > 5_000)
    }
}
