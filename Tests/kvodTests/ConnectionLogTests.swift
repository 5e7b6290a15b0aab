import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/OPERATIONS.md, "Logs": every connect is logged at `debug`, with the
/// peer's pid, uid and gid, and at `info` the first after a quiet interval,
/// then one line per interval counting the rest (issue 34 item 8: a scraper
/// every 15 s wrote ~5,800 `info` lines a day); every disconnect at `debug`.
@Suite struct ConnectionLogTests {
    /// Connects, pings and closes one client; returns its connect and disconnect lines.
    private func connectAndLeave(_ kvod: KVODProcess) throws -> (connected: String, disconnected: String?) {
        do {
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"ping"}"#)
        }
        let connected = try kvod.waitForLog(containing: "connected (pid=\(getpid()) uid=\(getuid()) gid=\(getgid())")
        let checker = try LineClient(path: kvod.socketPath)
        try waitUntil("kvod has seen the first client go", timeout: 10) {
            try checker.request(#"{"op":"info"}"#).reply["connections"] == 1
        }
        return (connected, kvod.lastLogLine(containing: "disconnected"))
    }

    @Test func connectsAfterTheFirstAreLoggedAtDebugAndSummedUpAtInfoOncePerInterval() throws {
        let kvod = try KVODProcess(arguments: ["--log-level", "debug", "--connection-log-seconds", "2"])
        for _ in 0..<4 {
            let client = try LineClient(path: kvod.socketPath)
            _ = try client.request(#"{"op":"ping"}"#)
        }
        // With the connection KVODProcess made to see kvod listen: five, the first of them at info.
        let summary = try kvod.waitForLog(containing: "more client(s) connected in the last 2 s")
        #expect(summary.contains(" info kvod: [kvod] 4 more client(s) connected"), "\(summary)")
        let lines = kvod.stderrText().split(separator: "\n").filter { $0.contains("connected (pid=\(getpid())") }
        #expect(lines.count == 5, "\(lines)")
        #expect(lines.filter { $0.contains(" info kvod:") }.count == 1, "only the first at info: \(lines)")
        #expect(lines.dropFirst().allSatisfy { $0.contains(" debug kvod:") }, "\(lines)")
    }

    @Test func theFirstConnectIsLoggedAtInfoWithItsPeerAndDisconnectAtDebug() throws {
        let kvod = try KVODProcess(arguments: ["--log-level", "debug"])
        _ = try connectAndLeave(kvod)
        let first = kvod.stderrText().split(separator: "\n").first { $0.contains(" connected (pid=") }
        #expect(first?.contains(" info kvod: [kvod] client #1 connected (pid=\(getpid()) uid=") == true, "\(first ?? "")")
        let disconnected = try kvod.waitForLog(containing: ") disconnected")
        #expect(disconnected.contains(" debug kvod: [kvod] client #"), "\(disconnected)")
        #expect(disconnected.contains("pid=\(getpid())"), "\(disconnected)")
    }

    @Test func atTheDefaultLevelConnectsAreLoggedAndDisconnectsAreNot() throws {
        let kvod = try KVODProcess()
        let (connected, disconnected) = try connectAndLeave(kvod)
        #expect(connected.contains(" info kvod: [kvod] client #"), "\(connected)")
        #expect(disconnected == nil, "\(disconnected ?? "")")
    }
}
