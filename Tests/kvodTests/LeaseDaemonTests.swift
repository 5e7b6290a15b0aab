import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 14, points 4-6, against the real kvod: values that die with the
/// process that set them, or at their deadline, also across restarts.
@Suite struct LeaseDaemonTests {
    @Test func ephemeralValueGoesWhenItsOwnerProcessIsKilled() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"svc/web","keyPath":"addr","options":["new"]}"#)
        let owner = try PipedProcess(URL(fileURLWithPath: "/usr/bin/socat"), ["-", "UNIX-CONNECT:\(kvod.socketPath)"])
        try owner.send(#"{"op":"set","object":"svc/web","keyPath":"addr","value":"10.0.0.5:80","ephemeral":true}"#)
        #expect(try JSONReader.parse(Array(owner.readLine(timeout: 10).utf8))["ok"] == true)
        #expect(try observer.readJSON()["new"] == "10.0.0.5:80")
        Glibc.kill(owner.pid, SIGKILL)
        let gone = try observer.readJSON()
        #expect(gone["new"] == .null && gone["cause"] == "disconnect", "\(gone)")
        #expect(try observer.request(#"{"op":"get","object":"svc/web","keyPath":"addr"}"#).reply["error"]?["code"]
            == "not_found")
    }

    @Test func ttlValueGoesAtItsDeadlineWithCauseTtlAndNotBefore() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"observe","object":"lease","keyPath":"holder","options":["new"]}"#)
        let start = Date()
        _ = try client.request(#"{"op":"set","object":"lease","keyPath":"holder","value":"a","ttl":1}"#)
        let read = try client.request(#"{"op":"get","object":"lease","keyPath":"holder"}"#)
        #expect(read.reply["expiresIn"] == 1, "\(read.reply)")
        let gone = try client.readJSON(timeout: 5)
        let after = Date().timeIntervalSince(start)
        #expect(gone["cause"] == "ttl" && gone["new"] == .null, "\(gone)")
        #expect(after >= 1.0 && after <= 2.5, "deleted after \(after) s")
    }

    @Test func deadlinesSurviveARestartAndOrphanedEphemeralValuesAreDeletedAtStart() throws {
        let data = try DataDirectory()
        var resume = 0
        var deadline = Date()
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            resume = try client.request(#"{"op":"set","object":"p","keyPath":"kept","value":1}"#).reply["seq"]?.intValue ?? -1
            _ = try client.request(#"{"op":"set","object":"p","keyPath":"mine","value":1,"ephemeral":true}"#)
            _ = try client.request(#"{"op":"set","object":"p","keyPath":"soon","value":1,"ttl":1}"#)
            _ = try client.request(#"{"op":"set","object":"p","keyPath":"later","value":1,"ttl":600}"#)
            deadline = Date().addingTimeInterval(1)
            kvod.signal(SIGKILL)
            _ = try kvod.waitForExit()
        }
        // The deadline passes while kvod is down.
        try waitUntil("the ttl of p.soon to pass", timeout: 10) { Date() > deadline }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        try waitUntil("kvod to delete the orphaned and expired values", timeout: 5) {
            (try? client.request(#"{"op":"get","object":"p"}"#).reply["value"]) == ["kept": 1, "later": 1]
        }
        let replay = try client.request(#"{"op":"observe","object":"p","options":["new"],"since":\#(resume)}"#)
        let causes = replay.events.compactMap { $0["cause"]?.stringValue }
        #expect(causes.sorted() == ["disconnect", "ttl"], "\(replay.events)")
        let later = try client.request(#"{"op":"get","object":"p","keyPath":"later"}"#).reply
        #expect((later["expiresIn"]?.intValue ?? 0) > 590, "\(later)")
    }
}
