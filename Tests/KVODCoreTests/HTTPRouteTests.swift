import KVODCore
import KVOEngine
import KVOValues
import KVOProtocol
import Testing

/// The HTTP API's pure parts: which request line a request becomes, how a reply
/// becomes a response, the tokens file.
@Suite struct HTTPRouteTests {
    static func line(_ method: String, _ target: String, body: String = "", ifMatch: String? = nil,
                     ifNoneMatch: String? = nil) throws(HTTPRefusal) -> String {
        let bytes = Array(body.utf8)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        let route = try HTTPRoute.route(HTTPRoute.Head(method: method, target: target, ifMatch: ifMatch, ifNoneMatch: ifNoneMatch),
                                        body: UnsafeRawBufferPointer(buffer))
        guard case .request(let line, _) = route else { return "\(route)" }
        return String(decoding: line, as: UTF8.self)
    }

    static func refusal(_ method: String, _ target: String, body: String = "", ifMatch: String? = nil) -> HTTPRefusal? {
        do {
            _ = try line(method, target, body: body, ifMatch: ifMatch)
            return nil
        } catch {
            return error
        }
    }

    @Test func aPathBecomesAnObjectAndAKeyPathOfItsSegments() throws {
        #expect(try Self.line("GET", "/v1/objects/cfg/server/port")
            == #"{"id":1,"op":"get","object":"cfg","keyPath":"server.port"}"# + "\n")
        #expect(try Self.line("GET", "/v1/objects/app%2Fweb/") == #"{"id":1,"op":"get","object":"app/web"}"# + "\n")
        #expect(try Self.line("DELETE", "/v1/objects/a/b", ifMatch: "\"4\"")
            == #"{"id":1,"op":"delete","object":"a","keyPath":"b","ifModSeq":4}"# + "\n")
        #expect(try Self.line("PUT", "/v1/objects/a/b?ttl=30", body: " { \"x\" :\n [1, 2] } ", ifNoneMatch: "*")
            == #"{"id":1,"op":"set","object":"a","keyPath":"b","value":{"x":[1,2]},"ifModSeq":0,"ttl":30}"# + "\n")
        #expect(try Self.line("GET", "/v1/objects/%C3%A9t%C3%A9") == #"{"id":1,"op":"get","object":"été"}"# + "\n")
    }

    @Test func whatIsNotARequestOfTheAPIIsRefusedWithItsCode() throws {
        #expect(Self.refusal("PUT", "/v1/objects/a/b", body: #"1,"object":"c""#)?.code == .badJSON)
        #expect(Self.refusal("PUT", "/v1/objects/a/b", body: "")?.code == .badRequest)
        #expect(Self.refusal("PUT", "/v1/objects/a/b?ttl=inf", body: "1")?.code == .badRequest)
        #expect(Self.refusal("GET", "/v1/objects/a%2")?.code == .badRequest)
        #expect(Self.refusal("GET", "/v1/objects/%FF")?.code == .badRequest)
        #expect(Self.refusal("GET", "/v1/objects/a//b")?.code == .badRequest)
        #expect(Self.refusal("DELETE", "/v1/objects/a", ifMatch: "W/\"1\"")?.code == .badRequest)
        #expect(Self.refusal("PATCH", "/v1/objects/a")?.status == 405)
        // A parameter the resource does not take, or one given twice, is refused as an unknown member is.
        #expect(Self.refusal("PUT", "/v1/objects/a/b?tll=5", body: "1")?.message == "PUT /v1/objects/{name} takes ttl, not tll")
        #expect(Self.refusal("PUT", "/v1/objects/a/b?ttl=5&ttl=6", body: "1")?.message == "ttl is given twice")
        #expect(Self.refusal("GET", "/v1/objects/a/b?ttl=5")?.message == "GET /v1/objects/{name} takes no query parameter, not ttl")
        #expect(Self.refusal("DELETE", "/v1/objects/a?x")?.code == .badRequest)
        #expect(Self.refusal("GET", "/v1/objects?limit=1&limit=2")?.message == "limit is given twice")
        #expect(Self.refusal("GET", "/v1/objects?prefix=a&max=3")?.message == "/v1/objects takes prefix, after, limit, not max")
        #expect(Self.refusal("GET", "/v1/watch?object=a&object=b")?.message == "object is given twice")
        #expect(Self.refusal("GET", "/v1/watch?object=a&since=3")?.code == .badRequest)
        #expect(Self.refusal("GET", "/v1/watch?object=a&keyPath=b&keyPath=c") == nil, "keyPath repeats for several")
        // A segment is one key: a dot decoded from %2E would make it two.
        #expect(Self.refusal("GET", "/v1/objects/a/k%2Ej")?.code == .badRequest)
        #expect(try Self.line("GET", "/v1/objects/a.b/k") == #"{"id":1,"op":"get","object":"a.b","keyPath":"k"}"# + "\n")
        #expect(Self.refusal("GET", "/v1/nothing")?.status == 404)
    }

    @Test func everyErrorCodeHasAStatusOfItsOwnKind() {
        for code in ErrorCode.allCases {
            let status = HTTPErrorStatus.of(code)
            #expect((400..<600).contains(status) && status != 500, "\(code) → \(status)")
        }
        #expect(HTTPErrorStatus.of(.preconditionFailed) == 412 && HTTPErrorStatus.of(.compacted) == 410)
    }

    @Test func aReplyBecomesTheResponse() {
        let value = HTTPAnswer(reply: Array(#"{"id":1,"ok":true,"value":{"a":1},"modSeq":7,"seq":9}"#.utf8), shape: .value)
        #expect(value.status == 200 && value.body == Array("{\"a\":1}\n".utf8) && value.headers == [HTTPHeader("etag", "\"7\"")])
        let missed = HTTPAnswer(reply: Array(#"{"id":1,"ok":false,"error":{"code":"precondition_failed","message":"m","modSeq":3}}"#.utf8),
                                shape: .written)
        #expect(missed.status == 412 && missed.headers == [HTTPHeader("etag", "\"3\"")])
        #expect(String(decoding: missed.body, as: UTF8.self) == #"{"code":"precondition_failed","message":"m","modSeq":3}"# + "\n")
        let info = HTTPAnswer(reply: Array(#"{"id":1,"ok":true,"seq":2}"#.utf8), shape: .reply)
        #expect(info.body == Array("{\"seq\":2}\n".utf8))
    }

    /// A GET's body is the value's bytes cut from kvod's reply: the same bytes
    /// the reply parsed and written again gives, whatever the value and
    /// wherever `ok`, `id` and `modSeq` stand.
    @Test func aGetsValueIsCutFromTheReplyAsParsingAndWritingItWouldGive() throws {
        let values = [#"{"a":1}"#, #"[1,[2,{"b":null}],"x"]"#, #""caf\u00e9 \"q\" \ud83d\ude00 \\ \/""#, "1e3", "-0",
                      "12345678901234567890", "3.25", "true", "false", "null", #""""#, "{}", "[]"]
        let layouts = [(#"{"id":1,"ok":true,"value":"#, #","modSeq":7}"#), (#"{"ok":true,"modSeq":7,"value":"#, #","id":"x"}"#),
                       (#"{ "value" : "#, #" , "ok" : true, "modSeq" : 7 }"#)]
        for literal in values {
            // kvod writes a value as its writer spells it: that is what a reply holds.
            let written = String(decoding: try JSONReader.parse(Array(literal.utf8)).jsonBytes, as: UTF8.self)
            for layout in layouts {
                let reply = Array((layout.0 + written + layout.1).utf8)
                let cut = try #require(reply.withUnsafeBytes { HTTPAnswer.value(from: $0) }, "\(layout) with \(written)")
                guard case .object(let members) = try JSONReader.parse(reply) else { Issue.record("not an object"); continue }
                #expect(cut.body == (members[Field.value] ?? JSONValue.null).jsonBytes + [0x0A], "\(layout) with \(written)")
                #expect(cut.status == 200 && cut.headers == [HTTPHeader("etag", "\"7\"")])
                #expect(HTTPAnswer(reply: reply, shape: .value) == cut)
            }
        }
        // What is not a successful get's reply takes the general path.
        for other in [#"{"id":1,"ok":false,"error":{"code":"not_found","message":"m"}}"#, #"{"ok":true,"ok":true,"value":1}"#,
                      #"{"ok":true,"value":1"#, #"{"o\u006b":true,"value":1}"#] {
            #expect(Array(other.utf8).withUnsafeBytes { HTTPAnswer.value(from: $0) } == nil, "\(other)")
        }
        #expect(HTTPAnswer(reply: Array(#"{"id":1,"ok":true}"#.utf8), shape: .value).body == Array("null\n".utf8))
    }

    /// The target is cut at its bytes: `?`, `/`, `&` and `=` only where they
    /// stand unescaped, empty parameters skipped, a value may hold `=`.
    @Test func aTargetIsCutIntoSegmentsAndParameters() throws {
        #expect(try Self.line("GET", "/v1/objects/é%2Fx/k") == #"{"id":1,"op":"get","object":"é/x","keyPath":"k"}"# + "\n")
        let listed = try Self.line("GET", "/v1/objects?prefix=a%2Fb+c&&limit=5&")
        #expect(listed == (try Self.line("GET", "/v1/objects?limit=5&prefix=a/b%20c")))
        #expect(listed.contains(#""prefix":"a/b c""#) && listed.contains(#""limit":5"#), "\(listed)")
        #expect(Self.refusal("GET", "/v1/objects?limit=5=5") != nil)
        #expect(Self.refusal("GET", "v1/objects")?.code == .badRequest)
        // A slash is a separator even before a combining mark (RFC 3986 cuts bytes, not characters).
        #expect(try Self.line("GET", "/v1/objects/a/\u{301}b") == #"{"id":1,"op":"get","object":"a","keyPath":"\#u{301}b"}"# + "\n")
        // A trailing slash names the same resource; an empty query or a name without `=` is kept as it is.
        #expect(try Self.line("GET", "/v1/objects/x/a/b/") == (try Self.line("GET", "/v1/objects/x/a/b")))
        #expect(try Self.line("GET", "/v1/objects/x/a/b/").contains(#""keyPath":"a.b""#))
        #expect(try Self.line("GET", "/v1/objects?") == (try Self.line("GET", "/v1/objects")))
        #expect(try Self.line("GET", "/v1/objects?prefix").contains(#""prefix":"""#))
        #expect(try Self.line("GET", "/v1/objects?after=%E2%98%83").contains(#""after":"☃""#))
        // Escapes that are malformed or decode to bytes that are not UTF-8 are refused, in the path and the query.
        for target in ["/v1/objects/x/%zz", "/v1/objects/x/k%4", "/v1/objects/%ff/k", "/v1/objects?prefix=%C3"] {
            #expect(Self.refusal("GET", target)?.code == .badRequest, "\(target)")
        }
    }

    @Test func theTokensFileNamesSubjectsAndDigests() throws {
        let digest = String(repeating: "ab", count: 32)
        let entries = try HTTPTokenFile.parse("# comment\n\nuid:1000 \(digest)  # alice\ngroup:staff \(digest.uppercased().dropLast())c\n")
        #expect(entries.map(\.subject) == [.uid(1000), .group("staff")])
        #expect(throws: HTTPTokenFile.Problem.self) { try HTTPTokenFile.parse("uid:x \(digest)\n") }
        #expect(throws: HTTPTokenFile.Problem.self) { try HTTPTokenFile.parse("uid:1 abc\n") }
        #expect(throws: HTTPTokenFile.Problem.self) { try HTTPTokenFile.parse("uid:1 \(digest)\ngid:2 \(digest)\n") }
    }

    @Test func aWatchIsAnObserveThatResumesAfterItsLastEventID() throws {
        let bytes: [UInt8] = []
        let route = try bytes.withUnsafeBytes { body in
            try HTTPRoute.route(HTTPRoute.Head(method: "GET", target: "/v1/watch?object=cfg&keyPath=a&keyPath=b.c&compact=true",
                                               lastEventID: "0a1b:5:2"), body: body)
        }
        guard case .watch(let line, let resumed, let queryToken) = route else { Issue.record("\(route)"); return }
        #expect(String(decoding: line, as: UTF8.self) == #"{"id":1,"op":"observe","object":"cfg","keyPaths":["a","b.c"],"options":["new"],"compact":true,"since":4,"epoch":"0a1b"}"# + "\n")
        #expect(resumed == HTTPEventID(epoch: "0a1b", seq: 5, count: 2))
        #expect(queryToken == nil)
        // An initial event before any change has seq 0: resuming after it replays from the start.
        #expect(HTTPEventID("0a1b:0:1") == HTTPEventID(epoch: "0a1b", seq: 0, count: 1))
        #expect(HTTPEventID("0a1b:1:0") == nil && HTTPEventID("x:1:1") == nil && HTTPEventID("0a1b:1") == nil)
        #expect(HTTPEventID("0a1b:+5:1") == nil && HTTPEventID("0a1b:5:+1") == nil && HTTPEventID("5:1") == nil)
        #expect(HTTPEventID("0a1b:5:2")?.description == "0a1b:5:2")
    }

    /// What a new `EventSource` cannot send as headers comes as parameters: the
    /// resume point (the browser's header wins, being newer) and the token.
    @Test func aWatchTakesItsResumePointAndTokenFromTheQueryForEventSource() throws {
        func watch(_ target: String, lastEventID: String? = nil) throws -> (line: String, resumed: HTTPEventID?, token: String?) {
            let route = try [UInt8]().withUnsafeBytes { body in
                try HTTPRoute.route(HTTPRoute.Head(method: "GET", target: target, lastEventID: lastEventID), body: body)
            }
            guard case .watch(let line, let resumed, let token) = route else { throw HTTPRefusal(.badRequest, "\(route)") }
            return (String(decoding: line, as: UTF8.self), resumed, token)
        }
        let fromQuery = try watch("/v1/watch?object=cfg&lastEventId=e1%3A7%3A3&access_token=t%2Bk")
        #expect(fromQuery.line == #"{"id":1,"op":"observe","object":"cfg","options":["new"],"since":6,"epoch":"e1"}"# + "\n")
        #expect(fromQuery.resumed == HTTPEventID(epoch: "e1", seq: 7, count: 3))
        #expect(fromQuery.token == "t+k")
        let headerWins = try watch("/v1/watch?object=cfg&lastEventId=e1:7:3", lastEventID: "e1:9:1")
        #expect(headerWins.resumed == HTTPEventID(epoch: "e1", seq: 9, count: 1))
        let afterSeqZero = try watch("/v1/watch?object=cfg&lastEventId=e1:0:1")
        #expect(afterSeqZero.line.contains(#""since":0,"#))
        #expect(throws: HTTPRefusal.self) { try watch("/v1/watch?object=cfg&lastEventId=nonsense") }
    }

    /// The console's files need no token and go out only to GET and HEAD.
    @Test func theConsoleIsServedAtTheRoot() throws {
        func route(_ method: String, _ target: String) throws -> HTTPRoute {
            try [UInt8]().withUnsafeBytes { body in try HTTPRoute.route(HTTPRoute.Head(method: method, target: target), body: body) }
        }
        #expect(try route("GET", "/") == .console(.page))
        #expect(try route("HEAD", "/console.js") == .console(.script))
        #expect(try route("GET", "/console.css") == .console(.style))
        #expect(throws: HTTPRefusal.self) { try route("PUT", "/") }
        #expect(throws: HTTPRefusal.self) { try route("GET", "/console.txt") }
        #expect(ConsoleFile.headers.contains { $0.name == "content-security-policy" && $0.value.contains("script-src 'self'") })
    }

    @Test func theFramerGivesEachEventOfASeqItsNumberAndLeavesOutWhatWasHad() {
        var framer = HTTPEventFramer(resumed: HTTPEventID(epoch: "e1", seq: 5, count: 1))
        #expect(framer.start(reply: Array(#"{"event":"change","seq":5}"#.utf8)) == nil)
        #expect(framer.start(reply: Array(#"{"id":1,"ok":true,"seq":5,"epoch":"e1"}"#.utf8)) == .stream(prelude: Array("retry: 1000\n\n".utf8)))
        var output: [UInt8] = []
        for line in [#"{"seq":5,"keyPath":"a"}"#, #"{"seq":5,"keyPath":"b"}"#, #"{"seq":6,"keyPath":"a"}"#] {
            framer.frame(event: Array(line.utf8), into: &output)
        }
        #expect(String(decoding: output, as: UTF8.self) == """
            id: e1:5:2\nevent: change\ndata: {"seq":5,"keyPath":"b"}\n\nid: e1:6:1\nevent: change\ndata: {"seq":6,"keyPath":"a"}\n\n
            """)
        var refused = HTTPEventFramer(resumed: nil)
        guard case .refused(let answer)? = refused.start(reply: Array(#"{"id":1,"ok":false,"error":{"code":"compacted","message":"m"}}"#.utf8)) else {
            Issue.record("not refused")
            return
        }
        #expect(answer.status == 410)
    }

    @Test func theFramerReadsOnlyTheLinesOwnSeqAndEvent() {
        var framer = HTTPEventFramer(resumed: nil)
        _ = framer.start(reply: Array(#"{"id":1,"ok":true,"seq":0,"epoch":"e2"}"#.utf8))
        var output: [UInt8] = []
        for line in [#"{"event":"change","new":{"seq":99,"event":"x"},"seq":5}"#,
                     #"{"o":2,"new":"a\"seq\":7","seq":6}"#,
                     #"{"ok":false,"error":{"code":"limit_exceeded","seq":3}}"#] {
            framer.frame(event: Array(line.utf8), into: &output)
        }
        let frames = String(decoding: output, as: UTF8.self).split(separator: "\n\n").map(String.init)
        #expect(frames.count == 3)
        #expect(frames[0].hasPrefix("id: e2:5:1\nevent: change\n"))
        #expect(frames[1].hasPrefix("id: e2:6:1\nevent: change\n"))
        #expect(frames[2].hasPrefix("event: error\ndata: {"))
    }
}
