import Foundation
import Glibc
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// A full disk under `--data-dir` (docs/DURABILITY.md, "A full disk"), on a
/// tmpfs of a few MiB: a write that adds data gets `storage_full` and changes
/// nothing, reads, observations and deletes go on, a commit that finds the
/// disk full is finished with kvod's reserve, and kvod takes writes again by
/// itself once there is room.
@Suite(.onDedicatedThread, .enabled(if: SmallFilesystem.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
struct FullDiskTests {
    @Test func aWriteIsRefusedAndChangesNothingWhileReadsObservationsAndDeletesGoOnUntilThereIsRoomAgain() throws {
        let disk = try SmallFilesystem(bytes: 4 << 20)
        defer { disk.remove() }
        let arguments = ["--data-dir", disk.path + "/data", "--storage-reserve", "512k"]
        var kvod = try KVODProcess(arguments: arguments)
        var client = try LineClient(path: kvod.socketPath)
        var observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        _ = try observer.request(#"{"op":"observe","object":"junk","options":["new"]}"#)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#).reply["ok"] == true)
        #expect(try client.request(#"{"op":"set","object":"junk","keyPath":"v","value":"\#(String(repeating: "j", count: 20_000))"}"#)
            .reply["ok"] == true)
        #expect(try observer.request(#"{"op":"ping"}"#).events.count == 2)
        #expect(try Self.storage(client)["full"] == false)

        // Less than the reserve free: full, once kvod has looked (every 0.5 s).
        try disk.fill("filler", leaving: 256 << 10)
        try Self.waitUntilStorage(client, full: true)
        let storage = try Self.storage(client)
        #expect(storage["reserveHeld"] == true && storage["reserveBytes"] == 524_288, "\(storage)")
        #expect(storage["since"]?.stringValue?.hasSuffix("Z") == true, "\(storage)")
        for write in [#"{"op":"set","object":"o","keyPath":"k","value":2}"#,
                      #"{"op":"set","object":"new","keyPath":"k","value":2}"#,
                      #"{"op":"insert","object":"o","keyPath":"list","values":[1]}"#,
                      #"{"op":"add","object":"o","keyPath":"k","by":1}"#,
                      #"{"op":"batch","ops":[{"op":"delete","object":"junk"},{"op":"set","object":"o","keyPath":"k","value":2}]}"#] {
            let refused = try client.request(write).reply
            #expect(refused["error"]?["code"] == "storage_full", "\(write): \(refused)")
        }
        // Nothing changed: not in memory, and no observer heard of it.
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == 1)
        #expect(try client.request(#"{"op":"get","object":"new"}"#).reply["error"]?["code"] == "not_found")
        #expect(try observer.request(#"{"op":"ping"}"#).events == [])
        // Reads and observations go on; a delete frees room and is taken.
        #expect(try client.request(#"{"op":"list","prefix":""}"#).reply["objects"] == ["junk", "o"])
        let initial = try client.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new","initial"]}"#)
        #expect(initial.events.first?["new"] == 1 && initial.reply["ok"] == true, "\(initial)")
        let deleted = try client.request(#"{"op":"delete","object":"junk"}"#).reply
        #expect(deleted["ok"] == true, "\(deleted)")
        #expect(try observer.request(#"{"op":"ping"}"#).events.map { $0["object"] } == ["junk"])
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["refused"]?["storage"] == 5, "\(info)")
        let metrics = try client.request(#"{"op":"metrics"}"#).reply["text"]?.stringValue ?? ""
        #expect(metrics.contains("kvod_storage_full 1"), "\(metrics)")
        #expect(metrics.contains(#"kvod_refused_total{limit="storage"} 5"#), "\(metrics)")

        // A restart on the full disk: the old value, still full, still refused.
        #expect(try kvod.terminate() == 0, "\(kvod.stderrText())")
        #expect(kvod.stderrText().components(separatedBy: "is full").count == 2, "logged once: \(kvod.stderrText())")
        kvod = try KVODProcess(arguments: arguments)
        client = try LineClient(path: kvod.socketPath)
        observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        #expect(try Self.storage(client)["full"] == true)
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply["value"] == 1)
        #expect(try client.request(#"{"op":"get","object":"junk"}"#).reply["error"]?["code"] == "not_found")
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":2}"#).reply["error"]?["code"]
            == "storage_full")

        // Room again: kvod takes writes by itself, no restart.
        disk.free("filler")
        try Self.waitUntilStorage(client, full: false)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":3}"#).reply["ok"] == true)
        #expect(try observer.readJSON()["new"] == 3)
        try kvod.waitForLog(containing: "has room again")
        #expect(try kvod.terminate() == 0, "\(kvod.stderrText())")
    }

    @Test func aCommitThatFindsTheDiskFullIsFinishedWithTheReserveAndOneThatCannotWaitsForRoom() throws {
        let disk = try SmallFilesystem(bytes: 8 << 20)
        defer { disk.remove() }
        let data = disk.path + "/data"
        let kvod = try KVODProcess(arguments: ["--data-dir", data, "--storage-reserve", "1m"])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#).reply["ok"] == true)
        // More than the reserve free, so writes are taken; less than the next one needs.
        try disk.fill("filler", leaving: (1 << 20) + (64 << 10))
        let big = String(repeating: "b", count: 600_000)
        let answered = try client.request(#"{"op":"set","object":"o","keyPath":"big","value":"\#(big)"}"#).reply
        #expect(answered["ok"] == true, "the reserve did not make room: \(answered)")
        try Self.waitUntilStorage(client, full: true)
        #expect(try Self.storage(client)["reserveHeld"] == false)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":2}"#).reply["error"]?["code"]
            == "storage_full")
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"big"}"#).reply["value"] == .string(big))

        // No room left at all (a checkpoint that found the disk full may have
        // taken the rest already): a delete whose history row holds the big
        // value cannot be written; it waits, and its reply with it, until there is room.
        try disk.fill("rest")
        try client.send(#"{"op":"delete","object":"o","keyPath":"big"}"#)
        try kvod.waitForLog(containing: "has no room for 1 changes")
        disk.free("filler")
        #expect(try client.readJSON()["ok"] == true)
        try kvod.waitForLog(containing: "changes that waited for room")
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"big"}"#).reply["error"]?["code"] == "not_found")
        // The checkpoints that found no room take what they need now: room for them, and for the reserve.
        disk.free("rest")
        try Self.waitUntilStorage(client, full: false)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":3}"#).reply["ok"] == true)
        #expect(try Self.storage(client)["reserveHeld"] == true)
        #expect(try kvod.terminate() == 0, "\(kvod.stderrText())")
        #expect(!kvod.stderrText().contains("critical"), "\(kvod.stderrText())")
    }

    /// A `backup`'s copy takes as much of the data directory's disk as the
    /// database: one that would leave less than the reserve free (and so
    /// refuse writes) is `storage_full`, leaves no file, and kvod goes on.
    @Test func aBackupWhoseCopyWouldEatIntoTheReserveIsStorageFullAndLeavesNothing() throws {
        let disk = try SmallFilesystem(bytes: 8 << 20)
        defer { disk.remove() }
        let data = disk.path + "/data"
        let kvod = try KVODProcess(arguments: ["--data-dir", data, "--storage-reserve", "512k"])
        let client = try LineClient(path: kvod.socketPath)
        let big = String(repeating: "b", count: 600_000)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"big","value":"\#(big)"}"#).reply["ok"] == true)
        // Checkpointed: kvod.db has every page, and takes no more of the disk later.
        try waitUntil("kvod.db is checkpointed", timeout: 10, recheckEvery: 0.02) { Self.fileSize(data + "/kvod.db") > 600_000 }
        // A first backup says how large a copy is; read to its end, kvod lets it go.
        let sized = try client.request(#"{"op":"backup"}"#).reply
        let size = try #require(sized["size"]?.intValue, "\(sized)")
        #expect(Self.fileSize(data + "/kvod.db") == size)
        let freeWhileHeld = disk.freeBytes
        #expect(try client.request(#"{"op":"backup","offset":\#(size)}"#).reply["data"] == "")
        try waitUntil("the first copy's space came back", timeout: 10, recheckEvery: 0.02) {
            disk.freeBytes >= freeWhileHeld + size - 4096
        }

        // Room for the copy, but then less than the reserve: refused before a page is copied.
        try disk.fill("filler", leaving: size + (256 << 10))
        let refused = try client.request(#"{"op":"backup"}"#).reply
        #expect(refused["error"]?["code"] == "storage_full", "\(refused)")
        #expect(refused["error"]?["message"]?.stringValue?.contains("--storage-reserve") == true, "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: data + "/kvod-backup.tmp"))
        // kvod goes on: writes are taken, the disk is not full.
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#).reply["ok"] == true)
        #expect(try Self.storage(client)["full"] == false)
        try kvod.waitForLog(containing: "cannot make a backup")

        disk.free("filler")
        let taken = try client.request(#"{"op":"backup"}"#).reply
        #expect(taken["size"]?.intValue == size && taken["ok"] == true, "\(taken)")
        #expect(try kvod.terminate() == 0, "\(kvod.stderrText())")
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    private static func storage(_ client: LineClient) throws -> JSONValue {
        try client.request(#"{"op":"info"}"#).reply["storage"] ?? .null
    }

    private static func waitUntilStorage(_ client: LineClient, full: Bool) throws {
        try waitUntil("info says storage.full is \(full)", timeout: 10, recheckEvery: 0.02) {
            try storage(client)["full"] == .bool(full)
        }
    }
}
