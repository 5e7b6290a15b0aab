import Foundation
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/OPERATIONS.md, "Logs": every connect is logged at `info`, with the
/// peer's pid, uid and gid; every disconnect at `debug`, so that the default
/// level says who came and a busy service's log is not doubled by departures.
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

    @Test func connectIsLoggedAtInfoAndDisconnectAtDebug() throws {
        let kvod = try KVODProcess(arguments: ["--log-level", "debug"])
        let (connected, _) = try connectAndLeave(kvod)
        #expect(connected.contains(" info kvod: [kvod] client #"), "\(connected)")
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
