import Foundation
import KVOTestSupport
import Testing

/// A `backup` whose client never reads it keeps a copy of the database on
/// the data directory's disk, unlinked (`du` does not see it): `info` and the
/// metrics must say how many are kept and how large, until they are let go.
@Suite(.onDedicatedThread) struct BackupHeldTests {
    @Test func theCopiesKeptForClientsThatDoNotReadAreCountedInInfoAndMetricsUntilTheyLeave() throws {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let observer = try LineClient(path: kvod.socketPath)
        try observer.pipeline(count: 200) { #"{"op":"set","object":"o\#($0)","keyPath":"v","value":"\#(String(repeating: "z", count: 2_000))"}"# }
        func held() throws -> (count: Int?, bytes: Int?) {
            let storage = try observer.request(#"{"op":"info"}"#).reply["storage"]
            return (storage?["backups"]?.intValue, storage?["backupBytes"]?.intValue)
        }
        let before = try held()
        #expect(before.count == 0 && before.bytes == 0, "\(before)")

        var size = 0
        do {
            let idle = try LineClient(path: kvod.socketPath)
            let reply = try idle.request(#"{"op":"backup"}"#, timeout: 30).reply
            size = try #require(reply["size"]?.intValue, "\(reply)")
            let during = try held()
            #expect(during.count == 1 && during.bytes == size, "\(during), size \(size)")
            let metrics = try observer.request(#"{"op":"metrics"}"#).reply["text"]?.stringValue ?? ""
            #expect(metrics.contains("kvod_backup_held_bytes \(size)"), "\(metrics.split(separator: "\n").filter { $0.contains("backup") })")
            withExtendedLifetime(idle) {}
        }
        try waitUntil("the copy of the client that left is let go", timeout: 10) {
            let after = try held()
            return after.count == 0 && after.bytes == 0
        }
    }
}
