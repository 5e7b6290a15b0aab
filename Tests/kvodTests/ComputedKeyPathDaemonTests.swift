import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 15, point 1, against the real kvod: collection operators read and
/// observed over the socket, and refused for writing.
@Suite struct ComputedKeyPathDaemonTests {
    @Test func sumObserverFollowsAnArrayEditedByInsertRemoveAndReplace() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        let observed = try observer.request(
            #"{"op":"observe","object":"cart","keyPath":"items.@sum.price","options":["new","old","initial"]}"#)
        #expect(observed.reply["ok"] == true)
        #expect(observed.events.first?["new"] == 0, "\(observed.events)")
        let edits = [
            #"{"op":"insert","object":"cart","keyPath":"items","values":[{"price":5},{"price":7},{"name":"x"}]}"#,
            #"{"op":"remove","object":"cart","keyPath":"items","index":0}"#,
            #"{"op":"replace","object":"cart","keyPath":"items","index":1,"value":{"price":30}}"#,
            #"{"op":"insert","object":"cart","keyPath":"items","index":0,"value":{"price":-2}}"#,
        ]
        for edit in edits { #expect(try writer.request(edit).reply["ok"] == true) }
        var events: [JSONValue] = []
        for _ in edits { events.append(try observer.readJSON()) }
        #expect(events.map { $0["new"] } == [12, 7, 37, 35], "\(events)")
        #expect(events.map { $0["old"] } == [0, 12, 7, 37], "\(events)")
        for event in events {
            #expect(event["kind"] == "setting" && event["changedKeyPath"] == "items"
                && event["keyPath"] == "items.@sum.price", "\(event)")
        }
        let read = try writer.request(#"{"op":"get","object":"cart","keyPath":"items.@sum.price"}"#).reply
        #expect(read["value"] == 35, "\(read)")
        let count = try writer.request(#"{"op":"get","object":"cart","keyPath":"items.@count"}"#).reply
        #expect(count["value"] == 3, "\(count)")
    }

    @Test func writingAComputedKeyPathIsRefusedAndChangesNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"tags","value":["a"]}"#).reply["ok"] == true)
        for line in [#"{"op":"set","object":"o","keyPath":"tags.@count","value":5}"#,
                     #"{"op":"insert","id":2,"object":"o","keyPath":"tags.@count","value":5}"#] {
            let reply = try client.request(line).reply
            #expect(reply["error"]?["code"] == "bad_request", "\(reply)")
        }
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["seq"] == 1)
    }
}
