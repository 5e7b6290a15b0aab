import KVOValues
import Testing
@testable import KVOEngine

/// Decodes `line` with ``RequestDecoder``.
private func decode(_ line: String) -> RequestDecoder.Outcome {
    Array(line.utf8).withUnsafeBytes { RequestDecoder.decode($0) }
}

/// The error `line` decodes to, or nil when it decodes to a request.
private func failure(_ line: String) -> (id: RequestID?, error: KVOEngineError)? {
    guard case .failure(let id, let error) = decode(line) else { return nil }
    return (id, error)
}

/// The request `line` decodes to, or nil when it fails.
private func request(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> Request? {
    switch decode(line) {
    case .request(let request):
        return request
    case .failure(_, let error):
        Issue.record("\(line) failed: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// `[[[…]]]` nested `depth` deep.
private func nestedArrays(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
}

@Suite struct RequestDecoderTests {
    // MARK: bad_json

    @Test(arguments: [
        "hello", "{", "}", #"{"op":"ping""#, #"{"op":"ping"} x"#, #"{"op":"ping",}"#, #"{'op':'ping'}"#,
        #"{"op":ping}"#, "{\"op\":\"p\u{01}\"}", #"{"op":"ping"}{"op":"ping"}"#,
    ])
    func decodeWhenNotJSONFailsBadJSON(line: String) {
        #expect(failure(line)?.error.code == .badJSON)
    }

    @Test(arguments: ["[]", #"[{"op":"ping"}]"#, "1", #""ping""#, "null", "true"])
    func decodeWhenNotAnObjectFailsBadJSON(line: String) {
        let result = failure(line)
        #expect(result?.error.code == .badJSON)
        #expect(result?.id == nil)
    }

    @Test func decodeWhenInvalidUTF8FailsBadJSON() {
        let bytes: [UInt8] = Array(#"{"op":"ping","id":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        guard case .failure(_, let error) = bytes.withUnsafeBytes({ RequestDecoder.decode($0) }) else {
            Issue.record("invalid UTF-8 was accepted")
            return
        }
        #expect(error.code == .badJSON)
    }

    @Test(arguments: [
        #"{"op":"ping","op":"ping"}"#,
        #"{"id":1,"op":"ping","id":2}"#,
        #"{"op":"ping","bogus":1,"bogus":2}"#,
        #"{"op":"set","object":"o","keyPath":"a","value":{"x":1,"x":2}}"#,
    ])
    func decodeWhenMemberRepeatsFailsBadJSON(line: String) {
        #expect(failure(line)?.error.code == .badJSON)
    }

    @Test func decodeWhenNestedDeeperThanMaxDepthFailsBadJSON() {
        #expect(RequestDecoder.maxDepth == 512)
        // The request object is one level: 511 arrays inside it make 512.
        let deepest = #"{"op":"set","object":"o","keyPath":"a","value":\#(nestedArrays(511))}"#
        #expect(request(deepest) != nil)
        let tooDeep = #"{"op":"set","object":"o","keyPath":"a","value":\#(nestedArrays(512))}"#
        #expect(failure(tooDeep)?.error.code == .badJSON)
        let hostile = #"{"id":1,"context":\#(nestedArrays(100_000))}"#
        let result = failure(hostile)
        #expect(result?.error.code == .badJSON)
        #expect(result?.id == 1)
    }

    // MARK: bad_request

    @Test func decodeWhenOpMissingFailsBadRequestNamingOp() {
        for line in [#"{}"#, #"{"id":1}"#, #"{"object":"o"}"#] {
            let error = failure(line)?.error
            #expect(error?.code == .badRequest)
            #expect(error?.message.contains(#""op""#) == true, "\(error?.message ?? "")")
        }
    }

    @Test(arguments: [
        (#"{"op":1}"#, "op"),
        (#"{"op":null}"#, "op"),
        (#"{"op":"get"}"#, "object"),
        (#"{"op":"get","object":5}"#, "object"),
        (#"{"op":"get","object":["o"]}"#, "object"),
        (#"{"op":"get","object":"o","keyPath":5}"#, "keyPath"),
        (#"{"op":"set","keyPath":"a","value":1}"#, "object"),
        (#"{"op":"set","object":"o","keyPath":"a"}"#, "value"),
        (#"{"op":"delete","object":"o","keyPath":true}"#, "keyPath"),
        (#"{"op":"insert","object":"o","keyPath":"a"}"#, "value"),
        (#"{"op":"insert","object":"o","keyPath":"a","values":1}"#, "values"),
        (#"{"op":"insert","object":"o","keyPath":"a","values":[]}"#, "values"),
        (#"{"op":"insert","object":"o","keyPath":"a","value":1,"values":[1]}"#, "values"),
        (#"{"op":"insert","object":"o","keyPath":"a","index":"1","value":1}"#, "index"),
        (#"{"op":"insert","object":"o","keyPath":"a","index":-1,"value":1}"#, "index"),
        (#"{"op":"insert","object":"o","keyPath":"a","index":1.5,"value":1}"#, "index"),
        (#"{"op":"remove","object":"o","keyPath":"a"}"#, "index"),
        (#"{"op":"remove","object":"o","keyPath":"a","indexes":3}"#, "indexes"),
        (#"{"op":"remove","object":"o","keyPath":"a","indexes":[]}"#, "indexes"),
        (#"{"op":"remove","object":"o","keyPath":"a","indexes":["0"]}"#, "indexes[0]"),
        (#"{"op":"remove","object":"o","keyPath":"a","indexes":[0,0]}"#, "indexes"),
        (#"{"op":"remove","object":"o","keyPath":"a","index":0,"indexes":[1]}"#, "indexes"),
        (#"{"op":"replace","object":"o","keyPath":"a","index":0}"#, "value"),
        (#"{"op":"replace","object":"o","keyPath":"a","value":0}"#, "index"),
        (#"{"op":"observe","keyPath":"a"}"#, "object"),
        (#"{"op":"observe","object":"o","keyPaths":"a"}"#, "keyPaths"),
        (#"{"op":"observe","object":"o","keyPaths":[]}"#, "keyPaths"),
        (#"{"op":"observe","object":"o","keyPaths":["a",1]}"#, "keyPaths[1]"),
        (#"{"op":"observe","object":"o","keyPath":"a","keyPaths":["b"]}"#, "keyPaths"),
        (#"{"op":"observe","object":"o","keyPath":"a","options":"new"}"#, "options"),
        (#"{"op":"observe","object":"o","keyPath":"a","options":["newest"]}"#, "options"),
        (#"{"op":"observe","object":"o","keyPath":"a","options":[1]}"#, "options"),
        (#"{"op":"observe","keyPath":"a"}"#, "object"),
        (#"{"op":"unobserve","keyPath":"a"}"#, "object"),
        (#"{"op":"unobserve","object":"o","keyPaths":{}}"#, "keyPaths"),
    ])
    func decodeWhenFieldMissingOrMistypedFailsBadRequestNamingIt(line: String, field: String) {
        let error = failure(line)?.error
        #expect(error?.code == .badRequest, "\(line)")
        #expect(error?.message.contains("\"\(field)\"") == true, "\(line): \(error?.message ?? "decoded")")
    }

    @Test(arguments: ["", ".", "a..b", ".a", "a.", "a.b."])
    func decodeWhenKeyPathMalformedFailsBadRequest(keyPath: String) {
        for line in [
            #"{"op":"get","object":"o","keyPath":"\#(keyPath)"}"#,
            #"{"op":"observe","object":"o","keyPaths":["a","\#(keyPath)"]}"#,
        ] {
            #expect(failure(line)?.error.code == .badRequest, "\(line)")
        }
    }

    @Test func decodeWhenKeyPathLongerThanLimitFailsBadRequest() {
        let longest = String(repeating: "a", count: ObservedPath.maxUTF8Length)
        #expect(request(#"{"op":"get","object":"o","keyPath":"\#(longest)"}"#) != nil)
        let line = #"{"op":"get","object":"o","keyPath":"\#(longest)b"}"#
        #expect(failure(line)?.error.code == .badRequest)
    }

    @Test func decodeWhenObjectNameLengthOutside1To1024BytesFailsBadRequest() {
        #expect(request(#"{"op":"get","object":"\#(String(repeating: "x", count: 1024))"}"#) != nil)
        #expect(request(#"{"op":"get","object":"x"}"#) != nil)
        // Counted in UTF-8 bytes, not characters: 512 two-byte characters fit, 513 do not.
        #expect(request(#"{"op":"get","object":"\#(String(repeating: "é", count: 512))"}"#) != nil)
        for name in [String(repeating: "x", count: 1025), String(repeating: "é", count: 513), ""] {
            let error = failure(#"{"op":"get","object":"\#(name)"}"#)?.error
            #expect(error?.code == .badRequest)
            #expect(error?.message.contains(#""object""#) == true)
        }
    }

    @Test func decodeWhenFieldUnknownFailsBadRequestNamingIt() {
        for line in [#"{"op":"ping","verbose":true}"#, #"{"op":"set","object":"o","keyPath":"a","value":1,"Value":2}"#] {
            let error = failure(line)?.error
            #expect(error?.code == .badRequest)
        }
        #expect(failure(#"{"op":"ping","verbose":true}"#)?.error.message.contains(#""verbose""#) == true)
    }

    @Test func decodeWhenTooManyKeyPathsOrIndexesFailsLimitExceeded() {
        let many = (0...RequestDecoder.maxListCount).map { "\"k\($0)\"" }.joined(separator: ",")
        #expect(failure(#"{"op":"observe","object":"o","keyPaths":[\#(many)]}"#)?.error.code == .limitExceeded)
        let indexes = (0...RequestDecoder.maxListCount).map(String.init).joined(separator: ",")
        #expect(failure(#"{"op":"remove","object":"o","keyPath":"a","indexes":[\#(indexes)]}"#)?.error.code
                == .limitExceeded)
        let enough = (0..<RequestDecoder.maxListCount).map { "\"k\($0)\"" }.joined(separator: ",")
        #expect(request(#"{"op":"observe","object":"o","keyPaths":[\#(enough)]}"#) != nil)
    }

    // MARK: unknown_op

    @Test(arguments: ["pong", "", "SET", "Set", "unobserveall", "names"])
    func decodeWhenOpUnknownFailsUnknownOp(op: String) {
        let error = failure(#"{"op":"\#(op)","id":1}"#)?.error
        #expect(error?.code == .unknownOp)
    }

    @Test func decodeWhenOpUnknownReportsItBeforeUnknownFields() {
        #expect(failure(#"{"op":"pong","whatever":1}"#)?.error.code == .unknownOp)
    }

    // MARK: id

    @Test(arguments: [
        "null", "true", "false", "0", "-7", "12345678901234567890123", "1.5e3", #""abc""#, #""""#, "[]",
        #"[1,"a",null]"#, "{}", #"{"k":{"n":[1]}}"#,
    ])
    func decodeWhenIdGivenKeepsItWhateverItsType(idText: String) throws {
        let id = try JSONReader.parse(idText)
        #expect(request(#"{"id":\#(idText),"op":"ping"}"#)?.id?.value == id)
        #expect(request(#"{"op":"ping","id":\#(idText)}"#)?.id?.value == id)
        #expect(failure(#"{"op":"nope","id":\#(idText)}"#)?.id?.value == id)
        #expect(failure(#"{"id":\#(idText),"op":"get"}"#)?.id?.value == id)
    }

    @Test func decodeWhenIdAbsentHasNoId() {
        #expect(request(#"{"op":"ping"}"#)?.id == nil)
        #expect(failure(#"{"op":"nope"}"#)?.id == nil)
    }

    @Test func decodeWhenLineBreaksAfterIdStillKeepsId() {
        #expect(failure(#"{"id":7,"op":"ping""#)?.id == 7)
        #expect(failure(#"{"id":7,"op":}"#)?.id == 7)
        #expect(failure(#"{"id":"x","id":"y"}"#)?.id == "x")
        #expect(failure(#"{"op":"ping" "id":7}"#)?.id == nil)  // never read
        #expect(failure(#"{"id":[1,2}"#)?.id == nil)           // never complete
    }

    /// Through the engine: every reply to a request with an id echoes it.
    @Test func handleWhenRequestHasIdEchoesItInSuccessAndErrorReplies() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        let cases: [(String, String?)] = [
            (#"{"id":{"n":1},"op":"ping"}"#, nil),
            (#"{"id":{"n":1},"op":"get","object":"missing"}"#, "not_found"),
            (#"{"id":{"n":1},"op":"get"}"#, "bad_request"),
            (#"{"id":{"n":1},"op":"get","object":"o","extra":1}"#, "bad_request"),
            (#"{"id":{"n":1},"op":"teleport"}"#, "unknown_op"),
            (#"{"id":{"n":1},"op":"ping"} trailing"#, "bad_json"),
            (#"{"id":{"n":1},"op":"ping","op":"ping"}"#, "bad_json"),
        ]
        for (line, code) in cases {
            let output = fixture.send(line, from: client)
            #expect(output.lines.count == 1, "\(line)")
            #expect(output.reply.member("id") == ["n": 1], "\(line) → \(output)")
            #expect(output.reply.member("ok") == .bool(code == nil), "\(line) → \(output)")
            #expect(output.reply.errorCode == code, "\(line) → \(output)")
            if code != nil {
                #expect(output.reply.memberNames == ["error", "id", "ok"])
                // get's not_found also says as of which seq nothing was there (and modSeq 0).
                let extra = code == "not_found" ? ["modSeq", "seq"] : []
                #expect(output.reply.member("error")?.memberNames == ["code", "message"] + extra)
                #expect(output.reply.errorMessage?.isEmpty == false)
            }
        }
    }

    @Test func handleWhenIdUnreadableOmitsIt() {
        let fixture = EngineFixture()
        let client = fixture.makeClient()
        for line in ["garbage", #"[{"id":1}]"#, #"{"op":"ping" "id":1}"#] {
            let output = fixture.send(line, from: client)
            #expect(output.lines.count == 1)
            #expect(output.reply.errorCode == "bad_json")
            #expect(output.reply.memberNames == ["error", "ok"], "\(line) → \(output)")
        }
        #expect(fixture.send(#"{"op":"nope"}"#, from: client).reply.memberNames == ["error", "ok"])
    }

    // MARK: What each op decodes to

    @Test func decodeSetReadsObjectKeyPathAndValue() {
        guard case .set(let object, let path, let value)? = request(
            #"{"op":"set","object":"o","keyPath":"a.b","value":{"x":[1]}}"#)?.operation
        else { Issue.record("not a set"); return }
        #expect(object == "o")
        #expect(path.components == ["a", "b"])
        #expect(value == ["x": [1]])
    }

    @Test func decodeGetAndDeleteKeyPathIsOptional() {
        guard case .get(_, nil)? = request(#"{"op":"get","object":"o"}"#)?.operation,
              case .get(_, let path?)? = request(#"{"op":"get","object":"o","keyPath":"a"}"#)?.operation,
              case .delete(_, nil)? = request(#"{"op":"delete","object":"o"}"#)?.operation,
              case .delete(_, let deletePath?)? = request(#"{"op":"delete","object":"o","keyPath":"b"}"#)?.operation
        else { Issue.record("get/delete decoded wrongly"); return }
        #expect(path == keyPath("a"))
        #expect(deletePath == keyPath("b"))
    }

    @Test func decodeInsertReadsIndexAndValueOrValues() {
        guard case .insert(_, _, nil, let one)? = request(
                  #"{"op":"insert","object":"o","keyPath":"a","value":1}"#)?.operation,
              case .insert(_, _, 3, let many)? = request(
                  #"{"op":"insert","object":"o","keyPath":"a","index":3,"values":[1,2]}"#)?.operation
        else { Issue.record("insert decoded wrongly"); return }
        #expect(one == [1])
        #expect(many == [1, 2])
    }

    @Test func decodeRemoveReturnsIndexesAscending() {
        guard case .remove(_, _, let indexes)? = request(
            #"{"op":"remove","object":"o","keyPath":"a","indexes":[5,0,3]}"#)?.operation
        else { Issue.record("remove decoded wrongly"); return }
        #expect(indexes == [0, 3, 5])
    }

    @Test func decodeReplaceKeepsEachValueWithItsIndex() {
        guard case .replace(_, _, let indexes, let values)? = request(
            #"{"op":"replace","object":"o","keyPath":"a","indexes":[5,0,3],"values":["five","zero","three"]}"#
        )?.operation
        else { Issue.record("replace decoded wrongly"); return }
        #expect(indexes == [0, 3, 5])
        #expect(values == ["zero", "three", "five"])
    }

    @Test func decodeObserveReadsKeyPathsOptionsAndContext() {
        guard case .observe(let object, let paths, let options, let context, let since, let policy, _, _, _)? = request(
            #"{"op":"observe","object":"o","keyPaths":["a","b.c"],"options":["prior","new"],"context":[1]}"#
        )?.operation
        else { Issue.record("observe decoded wrongly"); return }
        #expect(object == .object("o"))
        #expect(paths == [keyPath("a"), keyPath("b.c")])
        #expect(options == [.prior, .new])
        #expect(context == [1])
        #expect(since == nil)
        #expect(policy == .coalesce)

        guard case .observe(_, _, let none, let noContext, _, _, _, _, _)? = request(
            #"{"op":"observe","object":"o","keyPath":"a","options":[]}"#)?.operation
        else { Issue.record("observe decoded wrongly"); return }
        #expect(none == [])
        #expect(noContext == nil)

        guard case .observe(_, _, _, let nullContext, _, _, _, _, _)? = request(
            #"{"op":"observe","object":"o","keyPath":"a","context":null}"#)?.operation
        else { Issue.record("observe decoded wrongly"); return }
        #expect(nullContext == .some(.null))

        guard case .observe(_, _, _, _, let since, _, _, _, _)? = request(
            #"{"op":"observe","object":"o","keyPath":"a","since":18446744073709551615}"#)?.operation
        else { Issue.record("observe decoded wrongly"); return }
        #expect(since == ResumePoint(seq: UInt64.max))
    }

    @Test func decodeUnobserveKeyPathsAreOptional() {
        guard case .unobserve(.object("o"), nil)? = request(#"{"op":"unobserve","object":"o"}"#)?.operation,
              case .unobserve(.object("o"), let paths?)? = request(
                  #"{"op":"unobserve","object":"o","keyPaths":["a","b"]}"#)?.operation
        else { Issue.record("unobserve decoded wrongly"); return }
        #expect(paths == [keyPath("a"), keyPath("b")])
    }

    @Test func decodeOpsWithoutFieldsDecodeToTheirCase() {
        guard case .unobserveAll? = request(#"{"op":"unobserveAll"}"#)?.operation,
              case .ping? = request(#"{"op":"ping"}"#)?.operation,
              case .info? = request(#"{"op":"info"}"#)?.operation,
              case .observations? = request(#"{"op":"observations"}"#)?.operation
        else { Issue.record("decoded wrongly"); return }
    }

    @Test func decodeAcceptsWhitespaceAndAnyMemberOrder() {
        guard case .set("o", _, 1)? = request(
            " \t{ \"value\" : 1 ,\r\n \"keyPath\":\"a\", \"object\":\"o\" , \"op\":\"set\" } ")?.operation
        else { Issue.record("decoded wrongly"); return }
    }
}

/// The decoder's cache of parsed key paths: what it returns is what parsing
/// returns, for paths that share a slot too, and errors are not cached.
@Suite struct KeyPathCacheTests {
    @Test func cachedPathsAreTheParsedOnesEvenWhenPathsShareASlot() throws {
        var cache = KeyPathCache()
        // Many paths of the same length and last byte: they collide and replace each other.
        let texts = (0..<200).map { "k\($0 % 10)\($0 / 10 % 10)x" } + ["a.b.c", "a", "a.b", "config.flags.beta"]
        for round in 0..<3 {
            for text in texts.shuffled() {
                #expect(try cache.path(for: text) == ObservedPath(parsing: text), "round \(round): \(text)")
            }
        }
    }

    /// Long paths fill the cache's kept texts past their margin many times
    /// over: each compaction moves the live texts, and every hit must still
    /// compare with its own slot's text.
    @Test func longPathsStayTheParsedOnesAcrossCompactions() throws {
        var cache = KeyPathCache()
        let texts = (0..<120).map { n in
            (0..<(20 + n % 7)).map { "segment\(n)_\($0)" }.joined(separator: ".")
        }
        for round in 0..<4 {
            for text in texts.shuffled() {
                #expect(try cache.path(for: text) == ObservedPath(parsing: text), "round \(round): \(text)")
            }
        }
    }

    /// An observe finds its key path in the decoder's cache too; a computed
    /// path it observes is not kept, so a set of it is still refused.
    @Test func observedPathsAreCachedButAComputedOneIsStillRefusedToASet() {
        var decoder = RequestDecoder()
        func decoded(_ line: String) -> RequestDecoder.Outcome {
            Array(line.utf8).withUnsafeBytes { decoder.decode($0) }
        }
        for _ in 0..<2 {
            guard case .request(let observe) = decoded(#"{"op":"observe","object":"o","keyPath":"list.@count"}"#),
                  case .observe(_, let keyPaths, _, _, _, _, _, _, _) = observe.operation else {
                Issue.record("observe of a computed path not decoded"); return
            }
            #expect(keyPaths == [try! ObservedPath(parsing: "list.@count")])
            guard case .failure(_, let error) = decoded(#"{"op":"set","object":"o","keyPath":"list.@count","value":1}"#)
            else { Issue.record("a set of a computed path was decoded"); return }
            #expect(error.code == .badRequest)
            guard case .request(let plain) = decoded(#"{"op":"observe","object":"o","keyPath":"a.b"}"#),
                  case .observe(_, let plainPaths, _, _, _, _, _, _, _) = plain.operation else {
                Issue.record("observe not decoded"); return
            }
            #expect(plainPaths == [try! ObservedPath(parsing: "a.b")])
            #expect(failure(#"{"op":"observe","object":"o","keyPath":"a","keyPaths":["b"]}"#)?.error.message
                == #"give "keyPath" or "keyPaths", not both"#)
        }
    }

    @Test func invalidPathsThrowEveryTime() {
        var cache = KeyPathCache()
        for _ in 0..<3 {
            #expect(throws: KVOEngineError.self) { try cache.path(for: "a..b") }
            #expect(throws: KVOEngineError.self) { try cache.path(for: "") }
        }
    }
}
