import KVOProtocol
import Testing

/// The shared encoder writes, for every op, the bytes KVOClient's
/// `RequestLine` and kvod-bench's literals wrote before it replaced them
/// (each expected line below is one of theirs, byte for byte).
@Suite struct RequestEncoderTests {
    private func text(_ encoder: RequestEncoder) -> String { String(decoding: encoder.line, as: UTF8.self) }

    private func request(_ op: Op, _ object: String? = nil, _ keyPath: String? = nil,
                         _ build: (inout RequestEncoder) -> Void = { _ in }) -> String {
        var encoder = object.map { RequestEncoder(op: op, object: $0, keyPath: keyPath) } ?? RequestEncoder(op: op)
        build(&encoder)
        return text(encoder)
    }

    /// One line per op, as KVOClient wrote it.
    private var linePerOp: [Op: (written: String, expected: String)] {
        [
            .set: (request(.set, "person/1", "name") { $0.json(.value, Array(#""xsc""#.utf8)) },
                   #"{"op":"set","object":"person/1","keyPath":"name","value":"xsc"}"#),
            .get: (request(.get, "person/1"), #"{"op":"get","object":"person/1"}"#),
            .delete: (request(.delete, "person/1", "name") { $0.integer(.ifModSeq, UInt64(7)) },
                      #"{"op":"delete","object":"person/1","keyPath":"name","ifModSeq":7}"#),
            .insert: (request(.insert, "queue", "jobs") { $0.integer(.index, 0); $0.json(.values, "[1,2]".utf8) },
                      #"{"op":"insert","object":"queue","keyPath":"jobs","index":0,"values":[1,2]}"#),
            .remove: (request(.remove, "queue", "jobs") { $0.integers(.indexes, [0, 2]) },
                      #"{"op":"remove","object":"queue","keyPath":"jobs","indexes":[0,2]}"#),
            .replace: (request(.replace, "queue", "jobs") {
                           $0.integers(.indexes, [1]); $0.json(.values, Array(#"["x"]"#.utf8))
                       },
                       #"{"op":"replace","object":"queue","keyPath":"jobs","indexes":[1],"values":["x"]}"#),
            .add: (request(.add, "stats", "hits") { $0.integer(.by, -3) },
                   #"{"op":"add","object":"stats","keyPath":"hits","by":-3}"#),
            .observe: (request(.observe, "person/1", "name") {
                           $0.strings(.options, ["new", "old"]); $0.bool(.distinct, true)
                           $0.strings(.kinds, ["setting", "insertion"]); $0.integer(.throttle, 200)
                           $0.bool(.ack, true); $0.integer(.since, UInt64(17)); $0.string(.epoch, "9f0c2d41a7b35e18")
                       },
                       #"{"op":"observe","object":"person/1","keyPath":"name","options":["new","old"],"#
                           + #""distinct":true,"kinds":["setting","insertion"],"throttle":200,"ack":true,"since":17,"#
                           + #""epoch":"9f0c2d41a7b35e18"}"#),
            .unobserve: (request(.unobserve) { $0.string(.prefix, "services/"); $0.string(.keyPath, "addr") },
                         #"{"op":"unobserve","prefix":"services/","keyPath":"addr"}"#),
            .unobserveAll: (request(.unobserveAll), #"{"op":"unobserveAll"}"#),
            .ping: (request(.ping), #"{"op":"ping"}"#),
            .info: (request(.info), #"{"op":"info"}"#),
            .observations: (request(.observations) { $0.string(.after, "12"); $0.integer(.limit, 10) },
                            #"{"op":"observations","after":"12","limit":10}"#),
            .list: (request(.list) { $0.string(.prefix, "p/"); $0.string(.after, "p/1"); $0.integer(.limit, 100) },
                    #"{"op":"list","prefix":"p/","after":"p/1","limit":100}"#),
            .batch: (request(.batch) {
                         let delete = RequestEncoder(op: .delete, object: "q", keyPath: nil).jsonObject
                         $0.json(.ops, Array("[".utf8) + delete + Array("]".utf8))
                     },
                     #"{"op":"batch","ops":[{"op":"delete","object":"q"}]}"#),
            .metrics: (request(.metrics), #"{"op":"metrics"}"#),
            .ack: (request(.ack) { $0.integer(.seq, UInt64(42)) }, #"{"op":"ack","seq":42}"#),
        ]
    }

    @Test func everyOpIsWrittenAsKVOClientWroteIt() {
        let lines = linePerOp
        #expect(Set(lines.keys) == Set(Op.allCases), "an op without an expected line")
        for (op, line) in lines {
            #expect(line.written == line.expected + "\n", "\(op)")
        }
    }

    @Test func aSetsConditionsLifetimeAndAwaitFollowInTheOrderAdded() {
        let line = request(.set, "o", "k") {
            $0.integer(.ifModSeq, UInt64(0)); $0.json(.ifValue, Array("null".utf8)); $0.json(.value, Array("-5".utf8))
            $0.bool(.ephemeral, true); $0.json(.ttl, "1.5".utf8)
            $0.string(.await, "acknowledged"); $0.integer(.awaitTimeout, 5000)
        }
        #expect(line == #"{"op":"set","object":"o","keyPath":"k","ifModSeq":0,"ifValue":null,"value":-5,"#
            + #""ephemeral":true,"ttl":1.5,"await":"acknowledged","awaitTimeout":5000}"# + "\n")
    }

    @Test func kvodBenchsRequestsAreTheBytesItsLiteralsWrote() {
        var set = RequestEncoder(op: .set, object: "bench/7", keyPath: "v")
        set.member(.value)
        #expect(String(decoding: set.bytes, as: UTF8.self) == #"{"op":"set","object":"bench/7","keyPath":"v","value":"#)
        var observe = RequestEncoder(op: .observe, object: "bench/7", keyPath: "v")
        observe.strings(.options, ["new"])
        #expect(text(observe) == #"{"op":"observe","object":"bench/7","keyPath":"v","options":["new"]}"# + "\n")
        var socat = RequestEncoder(op: .observe, id: 0, object: "bench/7", keyPath: "v")
        socat.strings(.options, ["new"])
        #expect(text(socat) == #"{"id":0,"op":"observe","object":"bench/7","keyPath":"v","options":["new"]}"# + "\n")
    }

    @Test func stringsAreEscapedAsKvodsWriterEscapesThem() {
        let line = request(.get, "a\"b\\c\nd\r\t\u{8}\u{c}\u{1}\u{1f}é☃", nil)
        #expect(line == #"{"op":"get","object":"a\"b\\c\nd\r\t\b\f\u0001\u001fé☃"}"# + "\n")
    }

    @Test func integersAreWrittenInFullWithTheirSign() {
        let line = request(.ack) { $0.integer(.seq, UInt64.max); $0.integer(.index, Int.min); $0.integer(.limit, 0) }
        #expect(line == #"{"op":"ack","seq":18446744073709551615,"index":-9223372036854775808,"limit":0}"# + "\n")
    }

    @Test func aMemberByAGivenNameIsPassedOnAsWritten() {
        var encoder = RequestEncoder(op: .set)
        encoder.json(named: "keypath", Array("1".utf8))
        #expect(String(decoding: encoder.jsonObject, as: UTF8.self) == #"{"op":"set","keypath":1}"#)
    }
}
