import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `"update": true` on `observe` (issue 30 item 1) against the real kvod: a
/// key path the connection already observes takes the request's options in
/// place, so a client can ask for more (or less) without an event lost or
/// repeated; without it a second `observe` of the key path changes nothing.
@Suite struct ObserveUpdateTests {
    @Test func anUpdateChangesTheOptionsOfTheObservationInPlaceAndAPlainObserveDoesNot() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        let first = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"compact":true}"#)
            .reply
        let number = try #require(first["o"]?.intValue)
        #expect(try writer.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#).reply["ok"] == true)
        let plainEvent = try observer.readJSON()
        #expect(plainEvent["new"] == 1 && plainEvent["old"] == nil, "\(plainEvent)")
        // Observed again without update: KVOController's dedupe, the first options stay.
        #expect(try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new","old","prior"]}"#)
            .reply["ok"] == true)
        #expect(try writer.request(#"{"op":"set","object":"o","keyPath":"k","value":2}"#).reply["ok"] == true)
        let stillPlain = try observer.readJSON()
        #expect(stillPlain["new"] == 2 && stillPlain["old"] == nil && stillPlain["prior"] == nil, "\(stillPlain)")
        // With update: the same observation (its number), old and prior from the next change on.
        let updated = try observer.request(
            #"{"op":"observe","object":"o","keyPath":"k","options":["new","old","prior"],"update":true,"compact":true}"#)
            .reply
        #expect(updated["ok"] == true && updated["o"]?.intValue == number, "\(updated)")
        #expect(try writer.request(#"{"op":"set","object":"o","keyPath":"k","value":3}"#).reply["ok"] == true)
        let prior = try observer.readJSON()
        let event = try observer.readJSON()
        #expect(prior["prior"] == true && prior["old"] == 2 && prior["o"]?.intValue == number, "\(prior)")
        #expect(event["new"] == 3 && event["old"] == 2 && event["prior"] == nil, "\(event)")
        // And back: prior dropped, so the next change is one event, with new only.
        #expect(try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"update":true}"#)
            .reply["ok"] == true)
        #expect(try writer.request(#"{"op":"set","object":"o","keyPath":"k","value":4}"#).reply["ok"] == true)
        #expect(try writer.request(#"{"op":"ping","id":"after"}"#).reply["ok"] == true)
        let last = try observer.readJSON()
        #expect(last["new"] == 4 && last["old"] == nil && last["prior"] == nil, "\(last)")
        // Nothing else came: a ping's reply is the next line.
        let pong = try observer.request(#"{"op":"ping","id":"end"}"#)
        #expect(pong.events.isEmpty, "\(pong.events)")
        let listed = try observer.request(#"{"op":"observations"}"#).reply
        #expect(listed["observations"]?.arrayValue?.count == 1, "\(listed)")
    }

    @Test func anUpdateWithInitialSendsTheCurrentValueAgainAndObservesAKeyPathNotYetObserved() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"a","value":"A"}"#).reply["ok"] == true)
        #expect(try client.request(#"{"op":"observe","object":"o","keyPath":"a","options":["new"]}"#).reply["ok"] == true)
        let again = try client.request(
            #"{"op":"observe","object":"o","keyPaths":["a","b"],"options":["new","initial"],"update":true}"#)
        #expect(again.reply["ok"] == true, "\(again.reply)")
        let initial = again.events.map { "\($0["keyPath"]?.stringValue ?? ""):\(($0["new"] ?? .null).jsonString)" }
        #expect(initial.sorted() == [#"a:"A""#, "b:null"], "\(again.events)")
        let listed = try client.request(#"{"op":"observations"}"#).reply
        #expect(listed["observations"]?.arrayValue?.count == 2, "\(listed)")
    }

    @Test(arguments: [
        #"{"op":"observe","object":"o","keyPath":"k","update":"yes"}"#,
        #"{"op":"observe","object":"o","keyPath":"k","update":true,"since":0}"#,
        #"{"op":"observe","object":"o","keyPath":"k","update":true,"update":false}"#,
        #"{"op":"get","object":"o","keyPath":"k","update":true}"#,
    ])
    func aBadUpdateIsABadRequestAndChangesNothing(_ line: String) throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let reply = try client.request(line).reply
        #expect(reply["ok"] == false, "\(reply)")
        #expect(["bad_request", "bad_json"].contains(reply["error"]?["code"]?.stringValue ?? ""), "\(reply)")
        let listed = try client.request(#"{"op":"observations"}"#).reply
        #expect(listed["observations"]?.arrayValue?.isEmpty == true, "\(listed)")
    }
}
