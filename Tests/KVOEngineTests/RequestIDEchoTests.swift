import KVOValues
import Testing
@testable import KVOEngine

/// A reply echoes the request's `id` as JSON text, byte for byte: an integer
/// or a plain string as written (kept as its bytes, ``RequestID``), any other
/// id as its value written compactly, whatever the spelling of the line and
/// whether the reply is a success, an error or held for an `await`.
@Suite struct RequestIDEchoTests {
    /// An id as written in a request, and as its reply echoes it.
    static let ids: [(sent: String, echoed: String)] = [
        ("7", "7"), ("0", "0"), ("-0", "-0"), ("-42", "-42"), ("1234567", "1234567"), ("12345678", "12345678"),
        ("-123456789", "-123456789"),
        ("123456789012345678", "123456789012345678"), ("-123456789012345678", "-123456789012345678"),
        ("12345678901234567890123", "12345678901234567890123"),
        ("1.50", "1.50"), ("-2.5e-3", "-2.5e-3"), ("1E+2", "1E+2"),
        (#""""#, #""""#), (#""abc""#, #""abc""#),
        (#""123456789012345678901""#, #""123456789012345678901""#),    // 23 bytes: kept inline
        (#""1234567890123456789012""#, #""1234567890123456789012""#),  // 24 bytes: boxed
        (#""a\/b""#, #""a/b""#), (#""tab\there""#, #""tab\there""#), (#""q\"d""#, #""q\"d""#),
        (#""\u00e9t\u00E9""#, #""été""#), ("\"été\"", "\"été\""),
        ("[1, 2]", "[1,2]"), (#"{"k": [true, null], "n": {}}"#, #"{"k":[true,null],"n":{}}"#),
        ("null", "null"), ("true", "true"), ("false", "false"),
    ]

    private func reply(to line: String) -> String {
        let output = EngineFixture().send(line)
        #expect(output.text.count == 1, "\(line) → \(output)")
        return output.text.first ?? ""
    }

    @Test(arguments: ids)
    func successRepliesEchoTheIdWhereverItStands(id: (sent: String, echoed: String)) {
        for line in [
            #"{"id":\#(id.sent),"op":"set","object":"o","keyPath":"v","value":1}"#,
            #"{"op": "set", "object": "o", "keyPath": "v", "value": 1, "id": \#(id.sent)}"#,
            #"{"value":1,"keyPath":"v","id":\#(id.sent),"object":"o","op":"set"}"#,
            #"{"op":"set","object":"o\/p","keyPath":"v","value":1,"id":\#(id.sent)}"#,
            #"{"op":"ping","id":\#(id.sent)}"#,
        ] {
            #expect(reply(to: line).hasPrefix(#"{"id":\#(id.echoed),"ok":true"#), "\(line)")
        }
    }

    @Test(arguments: ids)
    func errorRepliesEchoTheIdReadBeforeOrAfterTheBadMember(id: (sent: String, echoed: String)) {
        for line in [
            #"{"op":"get","object":"o","bogus":1,"id":\#(id.sent)}"#,
            #"{"id":\#(id.sent),"op":"get","object":"o","bogus":1}"#,
            #"{"op":"nope","id":\#(id.sent)}"#,
            #"{"op": "get", "object": "missing", "id": \#(id.sent)}"#,
            #"{"id":\#(id.sent),"op":"ping","op":"ping"}"#,
            #"{"id":\#(id.sent),"op":"ping"} trailing"#,
        ] {
            #expect(reply(to: line).hasPrefix(#"{"id":\#(id.echoed),"ok":false"#), "\(line)")
        }
    }

    /// A reply held for an `await` outlives the line it came from.
    @Test(arguments: ids)
    func awaitedRepliesEchoTheIdAfterTheLineIsGone(id: (sent: String, echoed: String)) {
        let (fixture, writer) = EngineFixture.withClient()
        let observer = fixture.makeClient()
        fixture.ok(["op": "observe", "object": "o", "keyPath": "v", "ack": true], from: observer)
        var line = Array(#"{"op":"set","object":"o","keyPath":"v","value":1,"await":"acknowledged","id":\#(id.sent)}"#.utf8)
        line.withUnsafeBytes { fixture.engine.handle(line: $0, from: writer) }
        for index in line.indices { line[index] = UInt8(ascii: "x") }
        #expect(fixture.take(from: writer).text.isEmpty, "the reply waits")
        fixture.ok(["op": "ack", "seq": 1], from: observer)
        let text = fixture.take(from: writer).text
        #expect(text.count == 1 && text[0].hasPrefix(#"{"id":\#(id.echoed),"ok":true,"seq":1"#), "\(text)")
    }

    @Test func batchRepliesEchoTheBatchsId() {
        let text = reply(to: #"{"op":"batch","id":"b\/1","ops":[{"op":"set","object":"o","keyPath":"v","value":1}]}"#)
        #expect(text.hasPrefix(#"{"id":"b/1","ok":true"#), "\(text)")
    }

    @Test func idsAreEqualByValueHoweverKept() {
        let kept = Array(#"{"op":"ping","id":7}"#.utf8).withUnsafeBytes { line -> RequestID? in
            guard case .request(let request) = RequestDecoder.decode(line) else { return nil }
            return request.id
        }
        #expect(kept == 7)
        #expect(kept == RequestID(.number(JSONNumber(7))))
        #expect(kept?.value == .number(JSONNumber(7)))
        #expect(kept?.description == "7")
        let slash: RequestID = "a/b"
        #expect(slash.description == #""a/b""#)
    }
}
