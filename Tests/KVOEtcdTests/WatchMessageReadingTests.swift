import KVOValues
@testable import KVOEtcd
import Testing

/// The watch's pull reading of a message (EtcdWatchMessage.swift) against
/// the reading of the message parsed whole that it replaced: the same events
/// and fields, the same failures, for what etcd writes and what it does not.
@Suite struct WatchMessageReadingTests {
    static let messages = [
        // A put and a deletion, with every field, int64s as strings.
        #"{"result":{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"9","raft_term":"2"},"events":[{"kv":{"key":"L2t2b2Qvby9h","create_revision":"5","mod_revision":"9","version":"3","value":"eyJ2IjoxfQ=="}},{"type":"DELETE","kv":{"key":"L2t2b2Qvby9i","mod_revision":"9"}}]}}"#,
        // A previous value, a lease, a number where a string is due, a null, an unknown member.
        #"{"result":{"header":{"revision":"12"},"events":[{"kv":{"key":"YQ==","value":null,"lease":7,"mod_revision":"12","extra":[1,{"x":2}]},"prev_kv":{"key":"YQ==","value":"Yg=="}}],"watch_id":"0"}}"#,
        // base64 with an escape, a kv that is not an object, a prev_kv of null, a type that is not a string.
        #"{"result":{"events":[{"kv":{"key":"a\u002Bb/","value":"\u0059\u0051=="}},{"kv":"x","prev_kv":null},{"type":7,"kv":{}}]}}"#,
        // Fragments, created, progress, cancelled, compacted.
        #"{"result":{"header":{"revision":"3"},"events":[{"kv":{"key":"YQ==","mod_revision":"3"}}],"fragment":true}}"#,
        #"{"result":{"header":{"revision":"3"},"created":true}}"#,
        #"{"result":{"header":{"revision":"4"}}}"#,
        #"{"result":{"header":{"revision":"4"},"canceled":true,"cancel_reason":"why","compact_revision":"2"}}"#,
        #"{"result":"not an object"}"#,
        #"{"result":{"events":"not an array"}}"#,
        #"{"result":{"events":[]}}"#,
        #"{"other":1}"#,
        #"[1,2]"#,
        // Fields etcd could not have written: the failure is the events'.
        #"{"result":{"events":[{"kv":{"key":"YQ=="}},{"kv":{"key":"not base64!"}}]}}"#,
        #"{"result":{"events":[{"kv":{"mod_revision":"nine"}}]}}"#,
        #"{"result":{"events":[{"kv":{"version":true}}]}}"#,
        #"{"result":{"events":[{"kv":{"value":["YQ=="]}}]}}"#,
    ]

    /// The events as they were read before: from the parsed message, one by one.
    static func parsedEvents(_ json: JSONValue) -> Result<[EtcdWatchEvent], EtcdError> {
        var events: [EtcdWatchEvent] = []
        for event in (json.member("result") ?? .null).list("events") {
            do { events.append(try EtcdWatchEvent(event)) } catch { return .failure(error) }
        }
        return .success(events)
    }

    @Test func aMessageReadPieceByPieceGivesWhatItParsedWholeGave() throws {
        for text in Self.messages {
            let bytes = Array(text.utf8)
            let json = try JSONReader.parse(bytes)
            let read = try EtcdWatchMessage(bytes)
            #expect(read.hasResult == (json.member("result") != nil), "\(text)")
            #expect(read.hasError == (json.member("error") != nil), "\(text)")
            let result = json.member("result")
            #expect(read.header == result?.member("header"), "\(text)")
            for (name, value) in [("canceled", read.canceled), ("created", read.created), ("fragment", read.fragment),
                                  ("compact_revision", read.compactRevision), ("cancel_reason", read.cancelReason)] {
                #expect(value == result?.member(name), "\(name) of \(text)")
            }
            switch (read.events, Self.parsedEvents(json)) {
            case (.success(let events), .success(let parsed)): #expect(events == parsed, "\(text)")
            case (.failure, .failure): break
            case let (events, parsed): Issue.record("\(text): read \(events), parsed \(parsed)")
            }
        }
    }

    @Test func theEventsOfTheFirstMessageAreThePutAndTheDeletion() throws {
        let read = try EtcdWatchMessage(Array(Self.messages[0].utf8))
        let events = try read.events.get()
        #expect(events.map(\.kind) == [.put, .delete])
        #expect(events[0].kv == EtcdKeyValue(key: Array("/kvod/o/a".utf8), value: Array(#"{"v":1}"#.utf8),
                                             createRevision: 5, modRevision: 9, version: 3))
        #expect(events[1].kv.keyText == "/kvod/o/b" && events[1].kv.modRevision == 9 && events[1].prevKV == nil)
    }

    @Test func aMessageThatIsNotJSONIsRefused() {
        for text in [#"{"result":{"events":[{"kv":{}},]}}"#, #"{"result":{"events":[{"kv":{"key":"YQ==","key":"YQ=="}}]}}"#,
                     #"{"result":{"events":[1 2]}}"#, #"{"result":{}} x"#] {
            #expect(throws: JSONError.self, "\(text)") { _ = try EtcdWatchMessage(Array(text.utf8)) }
            #expect(throws: JSONError.self, "\(text)") { _ = try JSONReader.parse(Array(text.utf8)) }
        }
    }

    @Test func base64DecodesFromBytesLenientlyAsBefore() {
        let cases: [(String, String?)] = [("", ""), ("YQ==", "a"), ("YWI=", "ab"), ("YWJj", "abc"), ("YWJjZA", "abcd"),
                                          ("YQ=", "a"), ("Y===", nil), ("YQ==YQ==", nil), ("a b", nil), ("Zm9v!", nil)]
        for (text, expected) in cases {
            let decoded = Array(text.utf8).withUnsafeBytes { Base64.decode($0) }
            #expect(decoded == expected.map { Array($0.utf8) }, "\(text)")
        }
    }
}
