import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The limits on what clients may make kvod hold, over the socket: each
/// refusal is a `limit_exceeded` reply naming the limit and its value, and
/// `info` counts it under `refused`.
@Suite(.onDedicatedThread) struct ResourceLimitTests {
    @Test func badLimitFlagsStopKvodWithAMessageNamingTheFlag() throws {
        let directory = try TemporaryDirectory()
        for (arguments, expected) in [
            (["--history-bytes", "lots"], "--history-bytes must be a size"),
            (["--max-memory", "12x"], "--max-memory must be a size"),
            (["--max-memory", "16m"], "--max-memory (16777216 bytes) must be larger than --history-bytes (67108864 bytes)"),
            (["--max-observations-per-connection", "0"], "--max-observations-per-connection must be at least 1"),
            (["--max-connections-per-uid", "0"], "--max-connections-per-uid must be at least 1"),
        ] {
            let kvod = try CommandRun.run(KVODProcess.binaryURL, ["--socket", directory.path + "/s.sock"] + arguments)
            #expect(kvod.status != 0, "\(arguments)")
            #expect(kvod.stderr.contains(expected), "\(arguments): \(kvod.stderr)")
        }
        let help = try CommandRun.run(KVODProcess.binaryURL, ["--help"]).stdout
        for flag in ["--history-bytes", "--max-memory", "--max-observations-per-connection", "--max-connections-per-uid"] {
            #expect(help.contains(flag), "--help lists \(flag)")
        }
    }

    @Test func observationsOverMaxObservationsPerConnectionAreRefusedNamingTheFlag() throws {
        let kvod = try KVODProcess(arguments: ["--max-observations-per-connection", "3"])
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"observe","object":"o","keyPaths":["a","b","c"]}"#).reply["ok"] == true)
        let refused = try client.request(#"{"op":"observe","id":1,"object":"o","keyPath":"d"}"#).reply
        #expect(refused["error"]?["code"] == "limit_exceeded")
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("--max-observations-per-connection") && message.contains("3 observations"), "\(message)")
        // Another connection has its own allowance.
        let other = try LineClient(path: kvod.socketPath)
        #expect(try other.request(#"{"op":"observe","object":"o","keyPath":"d"}"#).reply["ok"] == true)
        #expect(try other.request(#"{"op":"info"}"#).reply["refused"]?["observations"] == 1)
    }

    @Test func writesPastMaxMemoryAreRefusedWhileReadsAndDeletesWork() throws {
        let kvod = try KVODProcess(arguments: ["--max-memory", "2m", "--history-bytes", "256k"])
        let client = try LineClient(path: kvod.socketPath)
        let value = String(repeating: "m", count: 100_000)
        var refused: JSONValue?
        for index in 0..<100 {
            let reply = try client.request(#"{"op":"set","object":"o","keyPath":"k\#(index)","value":"\#(value)"}"#).reply
            if reply["ok"] != true {
                refused = reply
                break
            }
        }
        let error = try #require(refused?["error"], "never refused")
        #expect(error["code"] == "limit_exceeded")
        let message = error["message"]?.stringValue ?? ""
        #expect(message.contains("--max-memory") && message.contains("2097152"), "\(message)")
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect((info["memory"]?["total"]?.intValue ?? .max) <= 2 << 20, "\(info)")
        #expect(info["memory"]?["limit"] == 2_097_152)
        #expect(info["refused"]?["memory"] == 1)
        #expect(try client.request(#"{"op":"get","object":"o","keyPath":"k0"}"#).reply["value"]?.stringValue == value)
        #expect(try client.request(#"{"op":"delete","object":"o","keyPath":"k0"}"#).reply["ok"] == true)
        #expect(try client.request(#"{"op":"set","object":"o","keyPath":"k0","value":"\#(value)"}"#).reply["ok"] == true,
                "deleting made room")
    }

    @Test(.enabled(if: ForeignClient.canSwitchUsers, "switching users needs root"))
    func connectionsOverMaxConnectionsPerUidAreRefusedWithAReasonAndOtherUsersServed() throws {
        let kvod = try KVODProcess(arguments: ["--socket-mode", "0666", "--max-connections-per-uid", "2"])
        // mkdtemp makes the directory 0700; nobody must be able to reach the socket in it.
        chmod(kvod.directory, 0o755)
        var nobodies = try (0..<2).map { _ in
            try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        }
        for client in nobodies { #expect(try client.request(#"{"op":"ping","id":"in"}"#)["id"] == "in") }

        let third = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
        let reason = try third.readJSON()
        #expect(reason["error"]?["code"] == "limit_exceeded")
        let message = reason["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("--max-connections-per-uid") && message.contains("at most 2 connections per uid")
                && message.contains("uid 65534"), "\(message)")
        #expect(try third.waitForEndOfStream())

        // kvod's own user (root here) is not limited, and is told the count.
        let roots = try (0..<5).map { _ in try LineClient(path: kvod.socketPath) }
        for root in roots { #expect(try root.request(#"{"op":"ping"}"#).reply["ok"] == true) }
        #expect(try roots[0].request(#"{"op":"info"}"#).reply["refused"]?["connectionsPerUid"] == 1)

        // Once one leaves, another of the same uid is served.
        try nobodies.removeLast().close()
        try waitUntil("kvod serves nobody again once one of its connections left", timeout: 10) {
            let client = try ForeignClient(socketPath: kvod.socketPath, user: "nobody", group: "nogroup")
            guard (try? client.request(#"{"op":"ping","id":"again"}"#)["id"]) == "again" else { return false }
            nobodies.append(client)
            return true
        }
    }
}
