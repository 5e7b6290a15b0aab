import Foundation
import KVOTestSupport
import Testing

/// With `--sync batch` (or `off`) the loop commits a large group of changes
/// itself. Replies held for such a group, made inside a flush (here: requests
/// put aside behind an awaited set, answered once its event is written), must
/// leave in that same flush: no writer thread wakes the loop for them.
@Suite struct LoopCommitReleaseTests {
    @Test(arguments: ["batch", "off"])
    func requestsAnsweredInsideAFlushAreRepliedWithoutAnotherWakeUp(sync: String) throws {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path, "--sync", sync])
        let observer = try LineClient(path: kvod.socketPath)
        #expect(try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#).reply["ok"] == true)
        let writer = try LineClient(path: kvod.socketPath)
        // One write: the awaited set holds the rest back until its event is
        // written, then its 200 followers are answered in that flush.
        let count = 200
        var lines = [#"{"op":"set","id":0,"object":"o","keyPath":"k","value":0,"await":"written"}"#]
        for index in 1...count {
            lines.append(#"{"op":"set","id":\#(index),"object":"p","keyPath":"k","value":\#(index)}"#)
        }
        try writer.send(lines.joined(separator: "\n"))
        for index in 0...count {
            let reply = try writer.readJSON(timeout: 10)
            #expect(reply["id"]?.intValue == index)
            #expect(reply["ok"] == true)
        }
    }
}
