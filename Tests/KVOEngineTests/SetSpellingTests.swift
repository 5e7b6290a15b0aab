@testable import KVOEngine
import Testing

/// Sets as KVOClient writes them (`{"op":"set","object","keyPath","value"}`,
/// no id, no space), and the same sets spelled otherwise: every one takes the
/// one pass and decodes as the full reader decodes it, into the same
/// ``Request`` as any other op (there is no path of a set's own).
@Suite struct SetSpellingTests {
    private static func takesTheOnePass(_ line: [UInt8]) -> Bool {
        RequestSpellingTests.takesTheOnePass(line)
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

    @Test func canonicalSetsTakeTheOnePassAndDecodeAsTheFullReaderDoes() {
        for line in Self.corpus {
            let bytes = Array(line.utf8)
            #expect(Self.takesTheOnePass(bytes), "\(line.prefix(80))")
            #expect(RequestSpellingTests.outcome(bytes) == RequestSpellingTests.outcome(bytes, scanning: false),
                    "\(line.prefix(80))")
        }
    }

    @Test func otherSpellingsOfASetTakeTheOnePassToo() {
        for line in [#"{"object":"o","op":"set","keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"id":1}"#,
                     #"{"id":"r1","op":"set","object":"o","keyPath":"a","value":1}"#,
                     #"{"op": "set", "object": "o", "keyPath": "a", "value": 1, "id": 7}"#,
                     #"{"op":"set","object":"\u006f","keyPath":"\u0061","value":1}"#,
                     #"{"op":"set","object":"o","value":{"a":1}}"#] {
            let bytes = Array(line.utf8)
            #expect(Self.takesTheOnePass(bytes), "\(line)")
            #expect(RequestSpellingTests.outcome(bytes) == RequestSpellingTests.outcome(bytes, scanning: false), "\(line)")
        }
    }

    @Test func setsWithConditionsLifetimesOrMistypedMembersTakeTheOnePassToo() {
        for line in [#"{"op":"set","object":"o","keyPath":"a","value":1,"ttl":5}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"ifModSeq":0}"#,
                     #"{"op":"set","object":1,"keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":["a"],"value":1}"#] {
            let bytes = Array(line.utf8)
            #expect(Self.takesTheOnePass(bytes), "\(line)")
            #expect(RequestSpellingTests.outcome(bytes) == RequestSpellingTests.outcome(bytes, scanning: false), "\(line)")
        }
    }

    @Test func onlyALineThatIsNoRequestNeedsTheFullReader() {
        for line in [#"{"op":"set","object":"o","keyPath":"a","value":1"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"extra":2}"#,
                     #"{"op":"set","object":"o","object":"p","keyPath":"a","value":1}"#] {
            let bytes = Array(line.utf8)
            #expect(!Self.takesTheOnePass(bytes), "\(line)")
            #expect(RequestSpellingTests.outcome(bytes).hasPrefix("failure"), "\(line)")
        }
    }

    @Test func mutatedSetsDecodeAsTheFullReaderDoes() {
        var mutator = LineMutator(seed: 0xca70_71ca)
        var onePass = 0
        for round in 0..<50_000 {
            let bytes = mutator.mutated(Self.corpus[round % Self.corpus.count])
            if Self.takesTheOnePass(bytes) { onePass += 1 }
            let viaOnePass = RequestSpellingTests.outcome(bytes)
            let viaFullReader = RequestSpellingTests.outcome(bytes, scanning: false)
            #expect(viaOnePass == viaFullReader, "\(String(decoding: bytes, as: UTF8.self).prefix(120))")
            if viaOnePass != viaFullReader { return }
        }
        // The comparison means something only if many mutated lines took the one pass.
        #expect(onePass > 5_000)
    }
}
