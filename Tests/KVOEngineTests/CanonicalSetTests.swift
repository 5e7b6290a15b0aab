@testable import KVOEngine
import Testing

/// The canonical `set` path (literal parts matched, no fields) against the
/// decoder's other paths: for every line, the same request or the same error.
@Suite struct CanonicalSetTests {
    private static func decoded(_ line: [UInt8], canonical: Bool, cache: inout KeyPathCache) -> String {
        let outcome = line.withUnsafeBytes {
            RequestDecoder.decodeForEngine($0, keyPaths: &cache, canonicalSets: canonical)
        }
        switch outcome {
        case .plainSet(let object, let keyPath, let value):
            return "set \(object) \(keyPath.components) \(value.jsonString)"
        case .outcome(.request(let request)):
            return "request \(request)"
        case .outcome(.failure(let id, let error)):
            return "failure \(String(describing: id)) \(error.code) \(error.message)"
        }
    }

    private static func takesTheCanonicalPath(_ line: [UInt8]) -> Bool {
        line.withUnsafeBytes { RequestScanner.scanCanonicalSet($0) } != nil
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

    @Test func canonicalSetsTakeTheShortPathAndDecodeAsTheOthersDo() {
        var fast = KeyPathCache()
        var slow = KeyPathCache()
        for line in Self.corpus {
            let bytes = Array(line.utf8)
            #expect(Self.takesTheCanonicalPath(bytes), "\(line.prefix(80))")
            #expect(Self.decoded(bytes, canonical: true, cache: &fast) == Self.decoded(bytes, canonical: false, cache: &slow),
                    "\(line.prefix(80))")
        }
    }

    @Test func otherShapesAreLeftToTheOtherPaths() {
        for line in [#"{"object":"o","op":"set","keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1,"id":1}"#,
                     #"{"op":"set", "object":"o","keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"\u006f","keyPath":"a","value":1}"#,
                     #"{"op":"set","object":"o","keyPath":"a","value":1"#] {
            #expect(!Self.takesTheCanonicalPath(Array(line.utf8)), "\(line)")
        }
    }

    @Test func canonicalPathAgreesWithTheOthersOnMutatedLines() {
        var mutator = LineMutator(seed: 0xca70_71ca)
        var fast = KeyPathCache()
        var slow = KeyPathCache()
        var canonicalTaken = 0
        for round in 0..<50_000 {
            let bytes = mutator.mutated(Self.corpus[round % Self.corpus.count])
            if Self.takesTheCanonicalPath(bytes) { canonicalTaken += 1 }
            let viaCanonical = Self.decoded(bytes, canonical: true, cache: &fast)
            let viaOthers = Self.decoded(bytes, canonical: false, cache: &slow)
            #expect(viaCanonical == viaOthers, "\(String(decoding: bytes, as: UTF8.self).prefix(120))")
            if viaCanonical != viaOthers { return }
        }
        // The comparison means something only if many mutated lines took the canonical path.
        #expect(canonicalTaken > 5_000)
    }
}
