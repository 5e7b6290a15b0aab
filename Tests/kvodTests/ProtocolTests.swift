import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Each op and error code, over a raw socket to the real kvod binary.
@Suite struct ProtocolTests {
    @Test func setThenGetReturnsValueAndSeqGrowsByOne() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let first = try client.request(#"{"op":"set","id":1,"object":"person/1","keyPath":"name","value":"xz"}"#).reply
        #expect(first["ok"] == true)
        #expect(first["id"] == 1)
        let second = try client.request(#"{"op":"set","id":"two","object":"person/1","keyPath":"address.city","value":"Oslo"}"#).reply
        #expect(second["id"] == "two")
        #expect(second["seq"]?.intValue == (first["seq"]?.intValue ?? -10) + 1)
        let whole = try client.request(#"{"op":"get","object":"person/1"}"#).reply
        #expect(whole["value"] == ["name": "xz", "address": ["city": "Oslo"]])
        let city = try client.request(#"{"op":"get","object":"person/1","keyPath":"address.city"}"#).reply
        #expect(city["value"] == "Oslo")
    }

    /// `get` says as of which seq its answer holds: the daemon's current seq,
    /// also after changes made elsewhere, and also when nothing is there.
    @Test func getReplyCarriesTheCurrentSeqFoundOrNot() throws {
        let kvod = try KVODProcess()
        let setter = try LineClient(path: kvod.socketPath)
        let reader = try LineClient(path: kvod.socketPath)
        _ = try setter.request(#"{"op":"set","object":"o","keyPath":"a","value":1}"#)
        _ = try setter.request(#"{"op":"set","object":"p","keyPath":"x","value":1}"#)
        let last = try setter.request(#"{"op":"set","object":"p","keyPath":"x","value":2}"#).reply
        #expect(last["seq"] == 3)
        #expect(try reader.request(#"{"op":"get","id":1,"object":"o","keyPath":"a"}"#).reply
            == ["id": 1, "ok": true, "value": 1, "modSeq": 1, "seq": 3])
        let missing = try reader.request(#"{"op":"get","object":"o","keyPath":"b"}"#).reply
        #expect(missing["error"]?["code"] == "not_found")
        #expect(missing["error"]?["seq"] == 3)
    }

    @Test func errorCodesAreRepliesAndTheConnectionGoesOn() throws {
        let kvod = try KVODProcess(arguments: ["--max-line-bytes", "200000"])
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"set","object":"o","keyPath":"s","value":"text"}"#)
        let cases: [(String, String)] = [
            ("this is not json", "bad_json"),
            (#"[1,2,3]"#, "bad_json"),
            (#"{"op":"set","object":"o"}"#, "bad_request"),
            (#"{"op":"fly"}"#, "unknown_op"),
            (#"{"op":"get","object":"o","keyPath":"missing"}"#, "not_found"),
            (#"{"op":"set","object":"o","keyPath":"s.x","value":1}"#, "not_an_object"),
            (#"{"op":"insert","object":"o","keyPath":"s","value":1}"#, "not_an_array"),
            (#"{"op":"insert","object":"o","keyPath":"list","index":3,"value":1}"#, "index_out_of_range"),
            (#"{"op":"get","object":"o","keyPath":"a..b"}"#, "bad_request"),
            (String(repeating: "x", count: 300_000), "too_large"),
            (#"{"op":"observe","object":"o","keyPaths":[\#((0...10_000).map { "\"k\($0 % 10)\"" }.joined(separator: ","))]}"#,
             "limit_exceeded"),
        ]
        for (line, code) in cases {
            let reply = try client.request(line).reply
            #expect(reply["ok"] == false, "\(line)")
            #expect(reply["error"]?["code"]?.stringValue == code, "\(line) → \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        // The store is untouched by the failed requests, and the connection still works.
        #expect(try client.request(#"{"op":"get","object":"o"}"#).reply["value"] == ["s": "text"])
        #expect(try client.request(#"{"op":"ping","id":9}"#).reply == ["id": 9, "ok": true])
    }

    @Test func badEntryOfAListFieldIsNamedWithItsPosition() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let cases: [(String, String)] = [
            (#"{"op":"observe","object":"o","keyPaths":["a","b","c",4]}"#, #"field "keyPaths[3]" must be a string"#),
            (#"{"op":"unobserve","object":"o","keyPaths":[null]}"#, #"field "keyPaths[0]" must be a string"#),
            (#"{"op":"observe","object":"o","keyPaths":["a","b..c"]}"#, #"field "keyPaths[1]": keyPath "b..c""#),
            (#"{"op":"remove","object":"o","keyPath":"l","indexes":[0,"1"]}"#,
             #"field "indexes[1]" must be a non-negative integer"#),
        ]
        for (line, message) in cases {
            let reply = try client.request(line).reply
            #expect(reply["error"]?["code"] == "bad_request", "\(line) → \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains(message) == true, "\(line) → \(reply)")
        }
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [])
    }

    @Test func observeWithEveryOptionSeesPriorThenChangeAndInitial() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let setter = try LineClient(path: kvod.socketPath)
        _ = try setter.request(#"{"op":"set","object":"p","keyPath":"name","value":"a"}"#)
        let observed = try observer.request(
            #"{"op":"observe","id":1,"object":"p","keyPath":"name","options":["new","old","initial","prior"],"context":{"c":1}}"#)
        #expect(observed.events.count == 1)
        #expect(observed.events.first?["initial"] == true)
        #expect(observed.events.first?["new"] == "a")
        #expect(observed.events.first?["context"] == ["c": 1])
        let seq = try setter.request(#"{"op":"set","object":"p","keyPath":"name","value":"b"}"#).reply["seq"]
        let prior = try observer.readJSON()
        let after = try observer.readJSON()
        #expect(prior["prior"] == true)
        #expect(prior["old"] == "a")
        #expect(prior["new"] == nil)
        #expect(after["prior"] == nil)
        #expect(after["new"] == "b")
        #expect(after["old"] == "a")
        #expect(prior["seq"] == seq && after["seq"] == seq)
    }

    @Test func collectionKindsReachExactObserversAndSettingReachesAncestors() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"observe","object":"d","keyPath":"list","options":["new","old"]}"#)
        _ = try client.request(#"{"op":"observe","object":"d","keyPaths":["box"],"options":["new"]}"#)
        let inserted = try client.request(#"{"op":"insert","object":"d","keyPath":"list","values":[1,2,3]}"#)
        #expect(inserted.events.count == 1)
        #expect(inserted.events.first?["kind"] == "insertion")
        #expect(inserted.events.first?["indexes"] == [0, 1, 2])
        #expect(inserted.events.first?["new"] == [1, 2, 3])
        #expect(inserted.events.first?["old"] == nil)
        let removed = try client.request(#"{"op":"remove","object":"d","keyPath":"list","indexes":[2,0]}"#)
        #expect(removed.events.first?["kind"] == "removal")
        #expect(removed.events.first?["indexes"] == [0, 2])
        #expect(removed.events.first?["old"] == [1, 3])
        #expect(removed.events.first?["new"] == nil)
        let replaced = try client.request(#"{"op":"replace","object":"d","keyPath":"list","index":0,"value":"x"}"#)
        #expect(replaced.events.first?["kind"] == "replacement")
        #expect(replaced.events.first?["old"] == [2])
        #expect(replaced.events.first?["new"] == ["x"])
        // A change under an observed path: the observer of "box" sees setting with the whole box.
        let nested = try client.request(#"{"op":"set","object":"d","keyPath":"box.inner.v","value":true}"#)
        #expect(nested.events.count == 1)
        #expect(nested.events.first?["keyPath"] == "box")
        #expect(nested.events.first?["kind"] == "setting")
        #expect(nested.events.first?["new"] == ["inner": ["v": true]])
        #expect(try client.request(#"{"op":"get","object":"d","keyPath":"list"}"#).reply["value"] == ["x"])
    }

    @Test func unobserveStopsEventsAndObservationsListsWhatIsLeft() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"observe","object":"o","keyPaths":["a","b"],"options":["new"],"context":7}"#)
        let listed = try client.request(#"{"op":"observations"}"#).reply["observations"]
        #expect(listed == [
            ["object": "o", "keyPath": "a", "options": ["new"], "policy": "coalesce", "context": 7, "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
            ["object": "o", "keyPath": "b", "options": ["new"], "policy": "coalesce", "context": 7, "eventsSent": 0, "eventsCoalesced": 0, "lastSeqSent": 0],
        ])
        _ = try client.request(#"{"op":"unobserve","object":"o","keyPath":"a"}"#)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"a","value":1}"#).events.isEmpty)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"b","value":1}"#).events.count == 1)
        _ = try client.request(#"{"op":"unobserveAll"}"#)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"b","value":2}"#).events.isEmpty)
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [])
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["observations"] == 0)
        #expect(info["connections"] == 1)
        #expect(info["objects"] == 1)
        #expect(info["version"]?.stringValue?.isEmpty == false)
    }

    @Test func observationsComeInPagesEachOnceOldestFirst() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        // 2,500: objects and prefixes, 5 key paths each, and one more made while paging.
        try client.pipeline(count: 500) { index in
            let scope = index % 2 == 0 ? #""object":"o\#(index)""# : #""prefix":"p\#(index)/""#
            return #"{"op":"observe",\#(scope),"keyPaths":["a","b","c","d","e"]}"#
        }
        var seen: [String] = []
        var after = ""
        var pages = 0
        while true {
            let reply = try client.request(#"{"op":"observations"\#(after)}"#).reply
            let entries = reply["observations"]?.arrayValue ?? []
            seen += entries.map { "\($0["object"] ?? $0["prefix"] ?? nil) \($0["keyPath"] ?? nil)" }
            pages += 1
            if pages == 1 {
                #expect(entries.count == 1000, "the default page is 1000")
                #expect(try client.request(#"{"op":"observe","object":"late","keyPath":"z"}"#).reply["ok"] == true)
            }
            guard reply["more"] == true else {
                #expect(reply["next"] == nil)
                break
            }
            guard let next = reply["next"]?.stringValue else {
                Issue.record("more without next: \(reply)")
                break
            }
            after = #","after":"\#(next)""#
        }
        #expect(pages == 3)
        #expect(seen.count == 2_501 && Set(seen).count == 2_501, "each exactly once")
        #expect(seen.last?.contains("late") == true, "the one made while paging comes last")

        let over = try client.request(#"{"op":"observations","limit":10001}"#).reply
        #expect(over["error"]?["code"] == "limit_exceeded", "\(over)")
        let bad = try client.request(#"{"op":"observations","after":{"object":"o0"}}"#).reply
        #expect(bad["error"]?["code"] == "bad_request", "\(bad)")
    }

    @Test func deleteOfNothingChangesNothingAndDeleteOfObjectNotifies() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let set = try client.request(#"{"op":"set","object":"o","keyPath":"a.b","value":1}"#).reply
        let nothing = try client.request(#"{"op":"delete","object":"o","keyPath":"zzz"}"#).reply
        #expect(nothing["ok"] == true)
        #expect(nothing["seq"] == set["seq"])
        _ = try client.request(#"{"op":"observe","object":"o","keyPath":"a.b","options":["new","old"]}"#)
        let deleted = try client.request(#"{"op":"delete","object":"o"}"#)
        #expect(deleted.events.first?["new"] == .null)
        #expect(deleted.events.first?["old"] == 1)
        #expect(try client.request(#"{"op":"get","object":"o"}"#).reply["error"]?["code"] == "not_found")
    }

    @Test func requestsPipelinedInOneWriteAreAnsweredInOrder() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        var burst = ""
        for index in 0..<3000 {
            burst += #"{"op":"set","id":\#(index),"object":"o","keyPath":"k","value":\#(index)}"# + "\r\n\n"
        }
        try client.write(Array(burst.utf8))
        for index in 0..<3000 {
            let reply = try client.readJSON()
            #expect(reply["id"]?.intValue == index)
            if reply["id"]?.intValue != index { break }
        }
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == 2999)
    }

    @Test func lineOfOnlyWhitespaceIsIgnoredLikeAnEmptyLine() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        try client.write(Array("   \n\t\r\n\n".utf8))
        // The first line back answers the ping: the blank lines got no reply.
        let reply = try client.request(#"{"op":"ping","id":1}"#).reply
        #expect(reply["id"] == 1 && reply["ok"] == true, "\(reply)")
    }

    @Test func lineSplitIntoSingleBytesIsOneRequest() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        for byte in Array(#"{"op":"ping","id":"slow"}"#.utf8) + [10] {
            try client.write([byte])
        }
        #expect(try client.readJSON() == ["id": "slow", "ok": true])
    }
}
