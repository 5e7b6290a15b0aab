import Foundation
import KVOTestSupport
import Testing

/// `set --hold`: the ephemeral value lives as long as kvoctl holds its connection.
@Suite(.onDedicatedThread) struct HoldCommandTests {
    @Test func aHoldWhoseKvodIsKilledExitsThreeSayingTheConnectionWasLost() async throws {
        let kvod = try await KVODProcess()
        let hold = try RunningCommand(KVOCtl.binaryURL, ["set", "seat", "owner", "me", "--ephemeral", "--hold",
                                                         "--socket", kvod.socketPath])
        defer { if hold.isRunning { hold.send(SIGKILL) } }
        try await waitUntil("kvod holds the seat", timeout: 20) { () async throws -> Bool in
            try await KVOCtl.run(kvod, ["get", "seat", "owner"]).stdout == "\"me\"\n"
        }
        try await kvod.kill()
        let run = try await hold.wait(timeout: 10)
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.hasPrefix("kvoctl: connection_lost"), "\(run.stderr)")
    }
}
