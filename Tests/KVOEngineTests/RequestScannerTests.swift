@testable import KVOEngine
import Testing

/// The request decoder's fast path against its full reader: for every line,
/// either the scanner gives up or both give the same request.
@Suite struct RequestScannerTests {
    /// What a line decodes to by one path, written out so two can be compared.
    private func outcome(_ fields: Fields) -> String {
        var fields = fields
        var keyPaths = KeyPathCache()
        do throws(KVOEngineError) {
            return "id: \(String(describing: fields.id)) operation: \(try fields.takeOperation(keyPaths: &keyPaths))"
        } catch {
            return "id: \(String(describing: fields.id)) error: \(error)"
        }
    }

    private func scanned(_ line: [UInt8]) -> String? {
        line.withUnsafeBytes { bytes in
            // Within the line's lifetime: the fields may point into it.
            var fields = Fields()
            guard RequestScanner.scan(bytes, into: &fields) else { return nil }
            return outcome(fields)
        }
    }

    private func read(_ line: [UInt8]) -> String {
        var fields = Fields()
        if let error = line.withUnsafeBytes({ RequestDecoder.readFields($0, into: &fields) }) {
            return "bad_json: \(error.message)"
        }
        return outcome(fields)
    }

    static let corpus: [String] = [
        #"{"op":"set","object":"person/1","keyPath":"name","value":"xsc"}"#,
        #"{"op":"set","object":"o","keyPath":"a.b.c","value":{"x":[1,2.5,-3e2,true,null]},"id":7}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":12345678901234567890123}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":-0}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":0.5}"#,
        #"{ "op" : "set" , "object" : "o" , "keyPath" : "a" , "value" : false }"#,
        #"{"id":"r1","op":"get","object":"o","keyPath":"a"}"#,
        #"{"op":"observe","object":"o","keyPath":"a","options":["new","old","initial","prior"],"context":{"c":1}}"#,
        #"{"op":"observe","object":"o","keyPaths":["a","b.c"],"options":["new","new"]}"#,
        #"{"op":"observe","object":"o","keyPath":"a","options":[]}"#,
        #"{"op":"observe","object":"o","keyPath":"a","options":["newer"]}"#,
        #"{"op":"observe","object":"o","keyPath":"a","options":["new","old"],"update":true,"compact":true}"#,
        #"{"op":"observe","object":"o","keyPath":"a","update":1}"#,
        #"{"op":"observe","object":"o","keyPath":"a","update":true,"update":true}"#,
        #"{"op":"observe","object":"o","keyPath":"a","update":true,"since":3}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":1,"update":false}"#,
        #"{"op":"unobserve","object":"o"}"#,
        #"{"op":"insert","object":"o","keyPath":"list","index":0,"values":[1,2]}"#,
        #"{"op":"replace","object":"o","keyPath":"list","indexes":[1,0],"values":["a","b"]}"#,
        #"{"op":"remove","object":"o","keyPath":"list","indexes":[3]}"#,
        #"{"op":"add","object":"o","keyPath":"n","by":1}"#, #"{"by": -7, "op": "add", "keyPath": "a.b", "object": "o"}"#,
        #"{"op":"add","object":"o","keyPath":"n","by":-9007199254740992,"ifModSeq":3,"ttl":5,"id":"a"}"#,
        #"{"op":"add","object":"o","keyPath":"n","by":9007199254740993}"#, #"{"op":"add","object":"o","keyPath":"n","by":1.5}"#,
        #"{"op":"add","object":"o","keyPath":"n","by":"1"}"#, #"{"op":"add","object":"o","keyPath":"n","by":1,"by":2}"#,
        #"{"op":"add","object":"o","keyPath":"n"}"#, #"{"op":"add","object":"o","by":1}"#, #"{"op":"get","object":"o","by":1}"#,
        #"{"op":"add","object":"o","keyPath":"n","by":1}"#,
        #"{"op":"batch","ops":[{"op":"add","object":"o","keyPath":"n","by":2},{"op":"add","object":"p","keyPath":"m","by":0}]}"#,
        #"{"op":"ping"}"#, #"{"op":"info","id":null}"#, #"{"op":"observations"}"#, #"{"op":"unobserveAll"}"#,
        #"{"op":"set","object":"caf\u00e9","keyPath":"a","value":1}"#,
        #"{"op":"set","object":"café","keyPath":"a","value":"ü"}"#,
        #"{"o\u0070":"set","object":"o","keyPath":"a","value":1}"#,
        #"{"op":"set","op":"get","object":"o","keyPath":"a","value":1}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":1,"extra":2}"#,
        #"{"op":"fly","object":"o"}"#, #"{"op":5}"#, #"{}"#, #"[]"#, #"{"op":"set"} x"#,
        #"{"op":"set","object":"o","keyPath":"a","value":tru}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":01}"#,
        #"{"op":"set","object":"o","keyPath":"","value":1}"#,
        #"{"op":"set","object":"o","keyPath":"a..b","value":1}"#,
        // Two-character escapes in printable ASCII, read in one pass; anything else beside them is not.
        #"{"op":"set","object":"bench\/0","keyPath":"v","value":"a\"b\\c\n\t\/","id":"r\/1"}"#,
        #"{"op":"set","object":"x\/é","keyPath":"a","value":"\/\u00e9"}"#,
        #"{"op":"set","object":"o\q","keyPath":"a","value":1}"#, #"{"op":"set","object":"o\/"#,
        #"{"id":-123456789012345678,"op":"ping"}"#, #"{"id":"12345678901234567890123","op":"ping"}"#,
        #"{"id":1.5e3,"op":"ping"}"#, #"{"id":[1, "a\/"],"op":"ping"}"#,
    ] + fastSpellings + [
        // Near the two-byte separators, the one-word ids and the one-pass escapes: not valid requests.
        #"{"op": "set", "object": "o", }"#, #"{"op": "set",  , "object": "o"}"#, #"{"op":: "ping"}"#,
        #"{"id":00,"op":"ping"}"#, #"{"op":"ping","id":7."#, #"{"op":"ping","id":7e"#, #"{"id":7"#,
        #"{"op":"set","object":"ab\/","keyPath":"a","value":"x\/\q     "}"#,
        "{\"op\":\"set\",\"object\":\"o\",\"keyPath\":\"a\",\"value\":\"x\\/\u{1}b\",\"id\":1}",
        #"{"op":"set","object":"o","keyPath":"a","value":"x\/"#,
        #"{"id":1,"op":5}"#, #"{"op":"ping","ix":7}"#, #"{"op":"ping","i"#,
    ]

    /// Spellings the one pass takes: spaces, tabs and newlines in odd places
    /// beside the two-byte separators, integer ids of every length around
    /// the one-word read, and escapes at a string's ends and around sixteen
    /// bytes (the one-pass decode's limit).
    static let fastSpellings: [String] = [
        #"{"op": "set", "object": "o","keyPath" :"a",  "value":  1 , "id": 7}"#,
        "{\"op\":\t\"set\",\n\"object\": \"o\",\r\n\"keyPath\":\"a\", \t\"value\": \n1,\"id\" : 2 }",
        #"{"op":"set" ,"object":"o", "keyPath":"a" , "value":"v"}"#,
        #"{"op":"ping","id":1234567}"#, #"{"op":"ping","id":12345678}"#, #"{"id":0,"op":"ping"}"#,
        #"{"op":"ping","id":7}"#, #"{"op":"ping","id" :7}"#, #"{"id":7,"op":"ping"}"#, #"{"id":1}"#, #"{"id":-7,"op":"ping"}"#,
        #"{"id":7.5,"op":"ping"}"#, #"{"id":7e2,"op":"ping"}"#, #"{"op":"ping","id":7E2}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"ab\n","id":1}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"\/","id":1}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"\"\\\b\f\n\r\t\/","id":1}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"a\u0041b\/","id":1}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"abcdefghijklmn\/p","id":12}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"abcdefghijklmno\/p","id":12}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"abcdefghijklmnopq\/","id":12}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"\/\/\/\/\/\/\/\/\/\/\/\/\/\/\/\/\/"}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"x\/"}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":"x\/\u00e9","id":"i"}"#,
    ]

    @Test func scannerAgreesWithTheFullReaderOnTheCorpus() {
        for line in Self.corpus {
            let bytes = Array(line.utf8)
            if let fast = scanned(bytes) { #expect(fast == read(bytes), "\(line)") }
        }
    }

    @Test func usualRequestsTakeTheFastPath() {
        let usual = [Self.corpus[0], Self.corpus[1], Self.corpus[5], Self.corpus[7], Self.corpus[15]]
        let escapedOrOddIDs = Self.corpus.filter { $0.contains("bench") || $0.contains(#"{"id":-1"#) || $0.contains(#"{"id":"1"#) }
        #expect(escapedOrOddIDs.count == 3)
        for line in usual + escapedOrOddIDs {
            #expect(scanned(Array(line.utf8)) != nil, "\(line)")
        }
    }

    @Test func oddSpacingShortIDsAndEscapesTakeTheFastPath() {
        for line in Self.fastSpellings {
            let bytes = Array(line.utf8)
            let fast = scanned(bytes)
            #expect(fast != nil, "\(line)")
            #expect(fast == read(bytes), "\(line)")
        }
    }

    @Test func scannerAgreesWithTheFullReaderOnMutatedLines() {
        var mutator = LineMutator(seed: 0x5ca1ab1e)
        var fastAccepted = 0
        for round in 0..<100_000 {
            let bytes = mutator.mutated(Self.corpus[round % Self.corpus.count])
            guard let fast = scanned(bytes) else { continue }
            fastAccepted += 1
            let full = read(bytes)
            #expect(fast == full, "\(String(decoding: bytes, as: UTF8.self))")
            if fast != full { return }
        }
        // The comparison means something only if the scanner accepted many mutated lines.
        #expect(fastAccepted > 1_000)
    }
}
