@testable import KVOEngine
import KVOTestSupport
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
        var random = SplitMix64(seed: 0xca70_71ca)
        let interesting = Array(#"{}[],:"\ .0123456789-eEtrufalsnk"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        var fast = KeyPathCache()
        var slow = KeyPathCache()
        var canonicalTaken = 0
        for round in 0..<50_000 {
            var bytes = Array(Self.corpus[round % Self.corpus.count].utf8)
            for _ in 0...Int(random.next() % 3) {
                let index = Int(random.next() % UInt64(bytes.count + 1))
                let byte = interesting[Int(random.next() % UInt64(interesting.count))]
                switch random.next() % 4 {
                case 0 where index < bytes.count: bytes[index] = byte
                case 1: bytes.insert(byte, at: index)
                case 2 where index < bytes.count: bytes.remove(at: index)
                default: bytes.removeSubrange(index...)
                }
            }
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
