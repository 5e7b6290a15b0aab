import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 34 item 4: `kvoctl backup FILE` while kvod runs and is written to,
/// and `kvod --restore FILE`, with the real binaries.
@Suite(.onDedicatedThread) struct BackupTests {
    static var kvoctl: URL { KVODProcess.productsDirectory.appendingPathComponent("kvoctl") }

    /// One acknowledged set of a writer: its seq, object and value.
    struct Write: Sendable {
        let seq: Int
        let object: String
        let value: Int
    }

    @Test func aBackupTakenUnderWritesRestoresTheStateAtItsSeq() throws {
        let data = try DataDirectory()
        let folder = try TemporaryDirectory()
        let file = folder.path + "/kvod.backup"
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        // About 3 MB: the copy takes a dozen steps or more, and writes land between them.
        let filler = String(repeating: "x", count: 1_500)
        let loader = try LineClient(path: kvod.socketPath)
        try loader.pipeline(count: 1_000) { #"{"op":"set","object":"pre/\#($0)","keyPath":"v","value":"\#(filler)\#($0)"}"# }
        let epoch = try loader.request(#"{"op":"info"}"#).reply["epoch"]

        let writes = Recorder<Write>()
        let failures = Recorder<String>()
        let stop = Recorder<Bool>()
        let done = DispatchSemaphore(value: 0)
        for writer in 0..<2 {
            Thread {
                defer { done.signal() }
                do {
                    let client = try LineClient(path: kvod.socketPath)
                    var value = 0
                    while stop.count == 0 {
                        value += 1
                        let object = "w\(writer)/\(value % 40)"
                        let reply = try client.request(#"{"op":"set","object":"\#(object)","keyPath":"v","value":\#(value)}"#).reply
                        guard let seq = reply["seq"]?.intValue else { throw TestFailure("set failed: \(reply)") }
                        writes.append(Write(seq: seq, object: object, value: value))
                    }
                } catch {
                    failures.append("\(error)")
                }
            }.start()
        }
        try waitUntil("the writers are writing", timeout: 20, recheckEvery: nil) { writes.count >= 20 }
        let acknowledgedBefore = writes.values.map(\.seq).max() ?? 0
        let backup = try RunningCommand(Self.kvoctl, ["backup", file, "--socket", kvod.socketPath]).wait(timeout: 60)
        let writtenDuring = writes.count
        // The writers go on after the backup too: its seq is not the end of the story.
        try waitUntil("the writers wrote after the backup", timeout: 20, recheckEvery: nil) {
            writes.count >= writtenDuring + 20
        }
        stop.append(true)
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 30) == .success, "a writer did not stop") }
        #expect(failures.values.isEmpty, "\(failures.values)")
        try #require(backup.status == 0, "kvoctl backup: \(backup.stderr)")
        let report = try JSONReader.parse(Array(backup.stdout.utf8))
        let seq = try #require(report["seq"]?.intValue)
        #expect(report["file"]?.stringValue == file)
        #expect(seq >= acknowledgedBefore, "every write acknowledged before the backup began is in it")
        #expect(writes.values.contains { $0.seq > seq }, "no write came after the backup's seq")
        print("backup at seq \(seq): \(writes.values.filter { $0.seq > acknowledgedBefore && $0.seq <= seq }.count) writes "
            + "acknowledged while it was taken are in it, \(writes.values.filter { $0.seq > seq }.count) later ones not")
        #expect(!FileManager.default.fileExists(atPath: file + ".tmp"))
        #expect(!FileManager.default.fileExists(atPath: data.path + "/kvod-backup.tmp"))
        try kvod.terminate()

        // What the state was at that seq: the preloaded values, then each write up to it.
        var expected: [String: String] = [:]
        for index in 0..<1_000 { expected["pre/\(index)"] = #""\#(filler)\#(index)""# }
        for write in writes.values.sorted(by: { $0.seq < $1.seq }) where write.seq <= seq {
            expected[write.object] = String(write.value)
        }
        let restoredDirectory = folder.path + "/restored"
        let restored = try KVODProcess(arguments: ["--data-dir", restoredDirectory, "--restore", file])
        let client = try LineClient(path: restored.socketPath)
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["seq"]?.intValue == seq)
        #expect(info["objects"]?.intValue == expected.count)
        #expect(info["epoch"] != epoch, "a restored history has an epoch of its own")
        let names = expected.keys.sorted()
        var lines: [UInt8] = []
        for name in names { lines.append(contentsOf: #"{"op":"get","object":"\#(name)","keyPath":"v"}"#.utf8 + [10]) }
        try client.write(lines)
        var wrong: [String] = []
        for name in names {
            let reply = try client.readJSON()
            if reply["value"]?.jsonString != expected[name] { wrong.append("\(name): \(reply), expected \(expected[name]!)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) objects differ from the state at seq \(seq): \(wrong.prefix(5))")
        try restored.terminate()
        #expect(restored.stderrText().contains("restored \(restoredDirectory) from \(file)"), "\(restored.stderrText())")
    }

    @Test func theWireFormIsOneReplyThenChunksOfBase64AskedByOffset() throws {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":"v"}"#)
        let early = try client.request(#"{"op":"backup","id":1,"offset":0}"#).reply
        #expect(early["error"]?["code"] == "bad_request", "\(early)")
        let start = try client.request(#"{"op":"backup","id":2}"#).reply
        #expect(start["id"] == 2)
        #expect(start["seq"] == 1, "\(start)")
        let size = try #require(start["size"]?.intValue)
        var bytes = Data()
        while true {
            let chunk = try client.request(#"{"op":"backup","offset":\#(bytes.count)}"#).reply
            let text = try #require(chunk["data"]?.stringValue, "\(chunk)")
            #expect(text.utf8.count <= 65_536)
            if text.isEmpty { break }
            bytes.append(try #require(Data(base64Encoded: text)))
        }
        #expect(bytes.count == size)
        #expect(bytes.starts(with: Array("SQLite format 3\0".utf8)))
        // Read to its end, the copy is let go.
        let gone = try client.request(#"{"op":"backup","offset":100}"#).reply
        #expect(gone["error"]?["message"]?.stringValue?.contains("holds no backup") == true, "\(gone)")
        // Any offset, any number of times, until then.
        _ = try client.request(#"{"op":"backup"}"#)
        for _ in 0..<2 {
            let again = try client.request(#"{"op":"backup","offset":100}"#).reply
            #expect(Data(base64Encoded: again["data"]?.stringValue ?? "")?.first == bytes[100])
        }
        let past = try client.request(#"{"op":"backup","offset":\#(size + 1)}"#).reply
        #expect(past["error"]?["code"] == "bad_request", "\(past)")
        // Two copies kept at once at most (this connection's is one): a third is told to wait.
        let second = try LineClient(path: kvod.socketPath)
        #expect(try second.request(#"{"op":"backup"}"#).reply["ok"] == true)
        let third = try LineClient(path: kvod.socketPath).request(#"{"op":"backup"}"#).reply
        #expect(third["error"]?["code"] == "limit_exceeded", "\(third)")
        withExtendedLifetime(second) {}
        let misplaced = try client.request(#"{"op":"get","object":"o","offset":1}"#).reply
        #expect(misplaced["error"]?["message"]?.stringValue?.contains("unknown field \"offset\"") == true, "\(misplaced)")

        let memoryOnly = try KVODProcess()
        let refused = try LineClient(path: memoryOnly.socketPath).request(#"{"op":"backup"}"#).reply
        #expect(refused["error"]?["code"] == "bad_request")
        #expect(refused["error"]?["message"]?.stringValue?.contains("no --data-dir") == true, "\(refused)")
    }

    @Test func twoClientsAskingAtOnceShareOneSnapshotAndOneThatLeavesHoldsUpNoOther() throws {
        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let first = try LineClient(path: kvod.socketPath)
        let second = try LineClient(path: kvod.socketPath)
        // About 10 MB: the copy takes long enough for the second request to come while it is made.
        let filler = String(repeating: "y", count: 4_000)
        try first.pipeline(count: 1_000) { #"{"op":"set","object":"o\#($0)","keyPath":"v","value":"\#(filler)"}"# }
        try first.write(Array(#"{"op":"backup","id":"a"}"#.utf8) + [10])
        try second.write(Array(#"{"op":"backup","id":"b"}"#.utf8) + [10])
        let a = try first.readJSON(timeout: 30), b = try second.readJSON(timeout: 30)
        #expect(a["ok"] == true && b["ok"] == true, "\(a) \(b)")
        #expect(a["seq"] == b["seq"])
        #expect(a["size"] == b["size"])
        // A client that asks and leaves at once (kvod answers it, as any request, then closes):
        // the next client's backup is made all the same.
        do {
            let leaving = try LineClient(path: kvod.socketPath)
            try leaving.send(#"{"op":"backup"}"#)
        }
        let later = try LineClient(path: kvod.socketPath).request(#"{"op":"backup"}"#, timeout: 30).reply
        #expect(later["seq"] == a["seq"], "\(later)")
        try kvod.terminate()
        #expect(kvod.stderrText().contains("backup made for 2 client(s)"), "\(kvod.stderrText())")
    }

    @Test func restoreRefusesADataDirectoryThatIsNotEmptyAndAFileThatIsNoBackup() throws {
        let folder = try TemporaryDirectory()
        let notABackup = folder.path + "/notes.txt"
        try "not a database".write(toFile: notABackup, atomically: true, encoding: .utf8)
        let refused = try CommandRun.run(KVODProcess.binaryURL, [
            "--socket", folder.path + "/a.sock", "--data-dir", folder.path + "/new", "--restore", notABackup,
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(notABackup) is not a kvod database"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/new/kvod.db"))

        let data = try DataDirectory()
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        _ = try LineClient(path: kvod.socketPath).request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        let file = folder.path + "/b.db"
        #expect(try CommandRun.run(Self.kvoctl, ["backup", file, "--socket", kvod.socketPath]).status == 0)
        try kvod.terminate()
        let occupied = try CommandRun.run(KVODProcess.binaryURL, [
            "--socket", folder.path + "/b.sock", "--data-dir", data.path, "--restore", file,
        ])
        #expect(occupied.status == 1)
        #expect(occupied.stderr.contains("the data directory \(data.path) is not empty"), "\(occupied.stderr)")
        // The directory kvod refused is as it was: the value is there.
        let again = try KVODProcess(arguments: ["--data-dir", data.path])
        #expect(try LineClient(path: again.socketPath).request(#"{"op":"get","object":"o","keyPath":"k"}"#)
            .reply["value"] == 1)
    }

    @Test(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"))
    func onlyRootKvodsOwnUserAndABackupGrantMayTakeOne() throws {
        let output = try ForeignKVOD.folder(writable: true)
        let file = output.path + "/kvod.backup"
        for (grant, allowed) in [("read", false), ("backup", true)] {
            let policyFolder = try TemporaryDirectory()
            let policy = policyFolder.path + "/policy.json"
            try #"{"grants": [{"user": "nobody", "prefix": "", "allow": ["\#(grant)"]}]}"#
                .write(toFile: policy, atomically: true, encoding: .utf8)
            let data = try DataDirectory()
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path, "--policy", policy, "--socket-mode", "0666"])
            chmod(kvod.directory, 0o755)
            _ = try LineClient(path: kvod.socketPath).request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
            let run = try ForeignKVOD.run(["backup", file, "--socket", kvod.socketPath], executable: Self.kvoctl)
            if allowed {
                #expect(run.status == 0, "\(run.stderr)")
                #expect(FileManager.default.fileExists(atPath: file))
            } else {
                #expect(run.status == 9, "\(run.stdout) \(run.stderr)")
                #expect(run.stderr.contains("forbidden: uid \(ForeignKVOD.uid) may not take a backup"), "\(run.stderr)")
                #expect(!FileManager.default.fileExists(atPath: file))
                #expect(!FileManager.default.fileExists(atPath: file + ".tmp"))
                // kvod's own user (root here) may.
                #expect(try CommandRun.run(Self.kvoctl, ["backup", file, "--socket", kvod.socketPath]).status == 0)
                unlink(file)
            }
        }
    }
}
