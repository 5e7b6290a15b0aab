import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// `info`'s `storage` says what waits for a commit: batches in flight and
/// connections whose output waits for them, so a client whose reply is late
/// can tell durability's wait from anything else.
@Suite(.onDedicatedThread) struct StorageInfoTests {
    @Test func infoInTheSameReadAsASetSeesItsBatchInFlightAndNothingOnceCommitted() throws {
        let data = try TemporaryDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path, "--sync", "always"])
        let client = try LineClient(path: kvod.socketPath)
        // One write: kvod reads both lines in one turn, so the set's batch is still gathering for the info.
        try client.write(Array((#"{"op":"set","object":"o","keyPath":"k","value":1}"# + "\n"
            + #"{"op":"info","id":"during"}"# + "\n").utf8))
        #expect(try client.readJSON()["ok"] == true)
        let during = try client.readJSON()
        #expect(during["id"] == "during" && during["storage"]?["commitsInFlight"] == 1, "\(during)")
        let after = try client.request(#"{"op":"info"}"#).reply["storage"]
        #expect(after?["commitsInFlight"] == 0 && after?["heldOutputConnections"] == 0
                && after?["heldOutputOldestMs"] == 0, "\(after ?? .null)")
    }
}
