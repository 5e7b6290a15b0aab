import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `observe` with `since` at its edges, over a socket to the real kvod.
@Suite struct ResumeTests {
    @Test func sinceTheCurrentSeqReplaysNothingThenLiveEventsFollow() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let seq = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#).reply["seq"]?.intValue ?? -1
        let observed = try client.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"since":\#(seq)}"#)
        #expect(observed.events.isEmpty)
        #expect(observed.reply["seq"]?.intValue == seq)
        let next = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":2}"#)
        #expect(next.events.map { $0["new"] } == [2])
    }

    @Test func sinceOlderThanTheHistoryIsCompactedAndObservesNothing() throws {
        let kvod = try KVODProcess(arguments: ["--history", "2"])
        let client = try LineClient(path: kvod.socketPath)
        for value in 1...5 { _ = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":\#(value)}"#) }
        let reply = try client.request(#"{"op":"observe","id":1,"object":"o","keyPath":"k","since":2}"#).reply
        #expect(reply["error"]?["code"] == "compacted")
        #expect(reply["error"]?["oldestSeq"] == 4)
        #expect(reply["error"]?["epoch"]?.stringValue?.count == 16)
        #expect(try client.request(#"{"op":"observations"}"#).reply["observations"] == [])
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["oldestSeq"] == 4)
        #expect(info["epoch"] == reply["error"]?["epoch"])
    }

    @Test func sinceInTheFutureIsBadRequest() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        let reply = try client.request(#"{"op":"observe","object":"o","keyPath":"k","since":2}"#).reply
        #expect(reply["error"]?["code"] == "bad_request")
        #expect(reply["error"]?["message"]?.stringValue?.contains("after the current seq 1") == true)
    }

    @Test func replayReachesObserversOfAnAncestorAndOfADescendantPath() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        _ = try writer.request(#"{"op":"set","object":"o","keyPath":"a.b.c","value":1}"#)  // 1
        _ = try writer.request(#"{"op":"set","object":"o","keyPath":"a.b","value":{"c":2,"d":3}}"#)  // 2
        _ = try writer.request(#"{"op":"delete","object":"o"}"#)  // 3
        let observer = try LineClient(path: kvod.socketPath)
        let replay = try observer.request(
            #"{"op":"observe","object":"o","keyPaths":["a","a.b.c"],"options":["new","old"],"since":0,"context":"r"}"#)
        // Live order: the ancestor "a" before the descendant "a.b.c" within each change.
        #expect(replay.events.map { $0["keyPath"] } == ["a", "a.b.c", "a", "a.b.c", "a", "a.b.c"])
        #expect(replay.events.map { $0["seq"] } == [1, 1, 2, 2, 3, 3])
        #expect(replay.events[0]["old"] == .null && replay.events[0]["new"] == ["b": ["c": 1]])
        #expect(replay.events[2]["old"] == ["b": ["c": 1]] && replay.events[2]["new"] == ["b": ["c": 2, "d": 3]])
        #expect(replay.events[3]["old"] == 1 && replay.events[3]["new"] == 2, "a.b.c lies under the replaced a.b")
        #expect(replay.events[5]["old"] == 2 && replay.events[5]["new"] == .null, "deleting the object")
        #expect(replay.events.allSatisfy { $0["context"] == "r" && $0["kind"] == "setting" })
    }

    @Test func replayedEventsAreTheLiveStreamByteForByteInItsOrder() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        _ = try writer.request(#"{"op":"set","object":"o","keyPath":"a","value":{"b":{"c":0}}}"#)
        // One connection observing an object's key paths (ancestors and
        // descendants of each other), its whole document, and a prefix.
        let requests = [
            #"{"op":"observe","object":"o","keyPaths":["a.b.c","a","x","a.d","a.b","a.b.e"],"options":["new","old","prior"],"context":"keys"}"#,
            #"{"op":"observe","object":"o","options":["new","old"],"context":"document"}"#,
            #"{"op":"observe","prefix":"p/","keyPaths":["k.m","k","k.n"],"options":["new","old"],"context":"prefix"}"#,
        ]
        let live = try LineClient(path: kvod.socketPath)
        var start = 0
        for request in requests { start = try live.request(request).reply["seq"]?.intValue ?? -1 }
        for change in [
            #"{"op":"set","object":"o","keyPath":"a.b.c","value":1}"#,
            #"{"op":"set","object":"o","keyPath":"a","value":{"b":{"c":2,"e":3},"d":[1,2]}}"#,
            #"{"op":"insert","object":"o","keyPath":"a.d","index":1,"values":[7,8]}"#,
            #"{"op":"batch","ops":[{"op":"set","object":"o","keyPath":"x","value":"y"},{"op":"set","object":"p/1","keyPath":"k","value":{"m":1,"n":2}},{"op":"delete","object":"o","keyPath":"a.b"}]}"#,
            #"{"op":"remove","object":"o","keyPath":"a.d","indexes":[0,2]}"#,
            #"{"op":"set","object":"p/2","keyPath":"k.m","value":5}"#,
            #"{"op":"set","object":"o","value":{"a":{"b":{"c":4,"e":5},"d":6},"x":null}}"#,
            #"{"op":"delete","object":"p/1"}"#,
            #"{"op":"delete","object":"o"}"#,
        ] {
            #expect(try writer.request(change).reply["ok"] == true, "\(change)")
        }
        // The ping's reply follows every event of the changes before it.
        let recorded = try eventLines(of: live, answering: #"{"op":"ping"}"#)
        let resumed = try LineClient(path: kvod.socketPath)
        for request in requests {
            let context = #""context":"\#(try JSONReader.parse(request)["context"]?.stringValue ?? "")"}"#
            let expected = recorded.filter { $0.hasSuffix(context) }
            let replayed = try eventLines(of: resumed, answering: request.dropLast() + #","since":\#(start)}"#)
            // On a mismatch, the first line that differs, not all of them.
            let first = zip(replayed, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(replayed.count, expected.count)
            #expect(replayed == expected, """
                \(request): \(replayed.count) replayed, \(expected.count) live; first difference at \(first):
                replayed \(first < replayed.count ? replayed[first] : "nothing")
                live     \(first < expected.count ? expected[first] : "nothing")
                """)
            #expect(expected.count > 5)
        }
    }

    /// Sends `request` and returns the event lines before its reply, as sent.
    private func eventLines(of client: LineClient, answering request: String) throws -> [String] {
        try client.send(request)
        var lines: [String] = []
        while true {
            let line = try client.readLine()
            guard line.hasPrefix(#"{"event""#) else { return lines }
            lines.append(line)
        }
    }
}
