import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Broken and hostile input over a real socket: each gets an error reply (or
/// is taken as the ordinary data it is), changes nothing it should not, and
/// leaves the connection and the daemon healthy. Pipelining thousands of
/// requests in one write and a line split into single bytes are in
/// ProtocolTests.
@Suite(.onDedicatedThread) struct HostileInputTests {
    /// After a hostile line: the connection still answers, another one too,
    /// and the store holds what it held.
    private func expectHealthy(_ kvod: KVODProcess, _ client: LineClient) throws {
        #expect(try client.request(#"{"op":"ping","id":"still here"}"#).reply["id"] == "still here")
        let other = try LineClient(path: kvod.socketPath)
        #expect(try other.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == "kept")
    }

    private func start() throws -> (KVODProcess, LineClient) {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":"kept"}"#)
        return (kvod, client)
    }

    private func reply(to bytes: [UInt8], on client: LineClient) throws -> JSONValue {
        try client.write(bytes + [10])
        return try client.readJSON()
    }

    @Test func invalidUTF8IsBadJSONAndChangesNothing() throws {
        let (kvod, client) = try start()
        for bad: [UInt8] in [[0xFF, 0xFE], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            let line = Array(#"{"op":"set","object":"o","keyPath":"k","value":""#.utf8) + bad + Array(#""}"#.utf8)
            let reply = try reply(to: line, on: client)
            #expect(reply["error"]?["code"] == "bad_json", "\(bad): \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("UTF-8") == true)
        }
        try expectHealthy(kvod, client)
    }

    @Test func nulByteIsBadJSONButEscapedNulIsAnOrdinaryCharacter() throws {
        let (kvod, client) = try start()
        let raw = Array(#"{"op":"set","object":"o","keyPath":"k","value":"a"#.utf8) + [0] + Array(#"b"}"#.utf8)
        #expect(try reply(to: raw, on: client)["error"]?["code"] == "bad_json")
        let outside = Array(#"{"op":"ping"}"#.utf8) + [0]
        #expect(try reply(to: outside, on: client)["error"]?["code"] == "bad_json")
        let escaped = #"{"op":"set","object":"n\u0000l","keyPath":"k\u0000","value":"a\u0000b"}"#
        #expect(try client.request(escaped).reply["ok"] == true)
        let read = try client.request(#"{"op":"get","object":"n\u0000l","keyPath":"k\u0000"}"#).reply
        #expect(read["value"] == .string("a\u{0}b"))
        try expectHealthy(kvod, client)
    }

    @Test func hundredMebibyteLineWithoutNewlineIsDiscardedNotBuffered() throws {
        let (kvod, client) = try start()
        let stats = ProcessStats(pid: kvod.pid)
        let before = try stats.residentBytes()
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<100 { try client.write(chunk) }
        // too_large comes as soon as the line crosses --max-line-bytes (1 MiB).
        let reply = try client.readJSON(timeout: 30)
        #expect(reply["error"]?["code"] == "too_large")
        try client.write([10])
        let peak = try stats.peakResidentBytes()
        print("100 MiB line: kvod RSS \(before) before, peak \(peak)")
        if TestEnvironment.residentMemoryIsMeaningful {
            #expect(peak - before < 8 << 20, "kvod grew from \(before) to \(peak) bytes")
        }
        try expectHealthy(kvod, client)
    }

    @Test func jsonNested100000DeepIsBadJSON() throws {
        let (kvod, client) = try start()
        let depth = 100_000
        let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let reply = try client.request(#"{"op":"set","id":1,"object":"o","keyPath":"k","value":\#(value)}"#).reply
        #expect(reply["error"]?["code"] == "bad_json")
        #expect(reply["error"]?["message"]?.stringValue?.contains("nesting deeper than 512") == true)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(objects)}"#).reply["error"]?["code"] == "bad_json")
        try expectHealthy(kvod, client)
    }

    @Test func numbersBeyondInt64AreKeptDigitForDigitAndBeyondDoubleAreRefused() throws {
        let (kvod, client) = try start()
        let huge = "123456789012345678901234567890123456789"
        let negative = "-98765432109876543210.5e-7"
        _ = try client.request(#"{"op":"observe","object":"n","keyPath":"v","options":["new"]}"#)
        try client.send(#"{"op":"set","id":\#(huge),"object":"n","keyPath":"v","value":[\#(huge),\#(negative)]}"#)
        let event = try client.readLine()
        let reply = try client.readLine()
        #expect(event.contains("\"new\":[\(huge),\(negative)]"), "\(event)")
        #expect(reply.hasPrefix("{\"id\":\(huge),\"ok\":true"), "\(reply)")
        let read = try client.request(#"{"op":"get","object":"n","keyPath":"v"}"#)
        #expect(read.reply["value"] == .array([.number(JSONNumber(validatedLiteral: huge)),
                                               .number(JSONNumber(validatedLiteral: negative))]))
        for tooBig in ["1e400", "-1e309", "1" + String(repeating: "0", count: 400)] {
            let refused = try client.request(#"{"op":"set","object":"n","keyPath":"v","value":\#(tooBig)}"#).reply
            #expect(refused["error"]?["code"] == "bad_json")
            #expect(refused["error"]?["message"]?.stringValue?.contains("number out of range") == true, "\(refused)")
        }
        #expect(try client.request(#"{"op":"get","object":"n","keyPath":"v"}"#).reply == read.reply)
        try expectHealthy(kvod, client)
    }

    @Test func duplicateMemberNamesAreBadJSONAtAnyDepth() throws {
        let (kvod, client) = try start()
        for line in [
            #"{"op":"set","op":"get","object":"o","keyPath":"k","value":"x"}"#,
            #"{"op":"set","object":"o","keyPath":"k","value":{"a":1,"a":2}}"#,
            #"{"op":"set","object":"o","keyPath":"k","value":{"é":1,"e\u0301":2}}"#,
        ] {
            let reply = try client.request(line).reply
            #expect(reply["error"]?["code"] == "bad_json", "\(line) → \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("duplicate") == true)
        }
        try expectHealthy(kvod, client)
    }

    @Test func keyPathWithEmptyComponentIsBadRequestForEveryOp() throws {
        let (kvod, client) = try start()
        for path in ["a..b", ".a", "a.", ".", ""] {
            for line in [
                #"{"op":"set","object":"o","keyPath":"\#(path)","value":1}"#,
                #"{"op":"observe","object":"o","keyPath":"\#(path)"}"#,
                #"{"op":"observe","object":"o","keyPaths":["ok","\#(path)"]}"#,
                #"{"op":"insert","object":"o","keyPath":"\#(path)","value":1}"#,
                #"{"op":"delete","object":"o","keyPath":"\#(path)"}"#,
            ] {
                #expect(try client.request(line).reply["error"]?["code"] == "bad_request", "\(line)")
            }
        }
        // The observe that named a good path next to a bad one registered neither.
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [])
        try expectHealthy(kvod, client)
    }

    @Test func prototypeStyleNamesAreOrdinaryNames() throws {
        let (kvod, client) = try start()
        for name in ["__proto__", "constructor", "prototype", "hasOwnProperty", "toString", "__defineGetter__"] {
            _ = try client.request(#"{"op":"observe","object":"\#(name)","keyPath":"\#(name).\#(name)","options":["new"]}"#)
            let set = try client.request(#"{"op":"set","object":"\#(name)","keyPath":"\#(name).\#(name)","value":{"\#(name)":1}}"#)
            #expect(set.reply["ok"] == true)
            #expect(set.events.first?["new"] == .object([name: 1]))
            let document = try client.request(#"{"op":"get","object":"\#(name)"}"#).reply["value"]
            #expect(document == .object([name: .object([name: .object([name: 1])])]), "\(name)")
        }
        #expect(try client.request(#"{"op":"info"}"#).reply["objects"] == 7)
        try expectHealthy(kvod, client)
    }

    @Test func requestsCutIntoRandomTinyWritesAreAnsweredInOrder() throws {
        let (kvod, client) = try start()
        var stream: [UInt8] = []
        for index in 0..<300 {
            stream += Array(#"{"op":"set","id":\#(index),"object":"t","keyPath":"k","value":"\#(index)"}"#.utf8) + [10]
        }
        var generator = SplitMix64(seed: 6)
        var offset = 0
        while offset < stream.count {
            let size = Int(generator.next() % 7) + 1
            try client.write(Array(stream[offset..<min(stream.count, offset + size)]))
            offset += size
        }
        for index in 0..<300 {
            let reply = try client.readJSON()
            #expect(reply["id"]?.intValue == index)
            if reply["id"]?.intValue != index { break }
        }
        try expectHealthy(kvod, client)
    }
}
