import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Issue 15, point 2, against the real kvod: `distinct` and `kinds` over the socket.
@Suite struct QuietObserverDaemonTests {
    @Test func distinctObserverHearsNothingOfASetOfAnEqualValue() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        let observed = try observer.request(
            #"{"op":"observe","object":"cfg","keyPath":"limits","options":["new"],"distinct":true}"#).reply
        #expect(observed["ok"] == true, "\(observed)")
        for line in [#"{"op":"set","object":"cfg","keyPath":"limits","value":{"cpu":2,"mem":1.0}}"#,
                     #"{"op":"set","object":"cfg","keyPath":"limits","value":{"mem":1,"cpu":2}}"#,
                     #"{"op":"set","object":"cfg","keyPath":"limits.cpu","value":2}"#,
                     #"{"op":"set","object":"cfg","keyPath":"limits.cpu","value":3}"#] {
            #expect(try writer.request(line).reply["ok"] == true)
        }
        let first = try observer.readJSON()
        let second = try observer.readJSON()
        #expect(first["seq"] == 1 && second["seq"] == 4, "\(first) \(second)")
        #expect(second["new"]?["cpu"] == 3 && second["changedKeyPath"] == "limits.cpu", "\(second)")
        // Nothing came between: the next line is the reply to this ping.
        #expect(try observer.request(#"{"op":"ping","id":"p"}"#).events.isEmpty)
        let listed = try observer.request(#"{"op":"observations"}"#).reply
        guard case .array(let entries)? = listed["observations"] else {
            Issue.record("no observations in \(listed)")
            return
        }
        #expect(entries.first?["distinct"] == true, "\(listed)")
    }

    @Test func kindsObserverHearsOnlyItsKinds() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try observer.request(
            #"{"op":"observe","object":"q","keyPath":"jobs","options":["new"],"kinds":["insertion"]}"#).reply["ok"] == true)
        for line in [#"{"op":"insert","object":"q","keyPath":"jobs","value":"a"}"#,
                     #"{"op":"remove","object":"q","keyPath":"jobs","index":0}"#,
                     #"{"op":"insert","object":"q","keyPath":"jobs","value":"b"}"#] {
            #expect(try writer.request(line).reply["ok"] == true)
        }
        let first = try observer.readJSON()
        let second = try observer.readJSON()
        #expect(first["new"] == ["a"] && second["new"] == ["b"], "\(first) \(second)")
        #expect(try observer.request(#"{"op":"ping","id":"p"}"#).events.isEmpty)
    }
}
