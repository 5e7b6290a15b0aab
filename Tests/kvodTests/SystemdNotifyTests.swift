import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What kvod tells systemd over `NOTIFY_SOCKET`, received on a socket the
/// test binds: READY=1, STATUS=, WATCHDOG=1 and STOPPING=1.
@Suite struct SystemdNotifyTests {
    @Test func readyArrivesOnlyWhenAClientCanConnect() throws {
        let notify = try NotifySocket()
        let kvod = try KVODProcess(environment: ["NOTIFY_SOCKET": notify.address], waitForSocket: false)
        let ready = try notify.waitFor("READY=1")
        // No retry: the socket listens by the time READY=1 is sent.
        #expect(UnixSockets.canConnect(kvod.socketPath))
        #expect(ready.status == "Serving 0 connections, 0 observations")
        #expect(try kvod.terminate() == 0)
    }

    @Test func abstractNotifySocketIsReached() throws {
        let notify = try NotifySocket(abstract: true)
        let kvod = try KVODProcess(environment: ["NOTIFY_SOCKET": notify.address])
        try notify.waitFor("READY=1")
        #expect(try kvod.terminate() == 0)
    }

    @Test func statusLineCountsConnectionsAndObservationsAndStoppingEndsIt() throws {
        let notify = try NotifySocket()
        let kvod = try KVODProcess(environment: ["NOTIFY_SOCKET": notify.address])
        try notify.waitFor("READY=1")
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"observe","object":"o","keyPaths":["a","b"]}"#)
        try notify.waitFor("STATUS=Serving 1 connection, 2 observations")
        kvod.signal(SIGTERM)
        let stopping = try notify.waitFor("STOPPING=1")
        #expect(stopping.status == "Stopping: closing 1 connection")
        #expect(try kvod.waitForExit() == 0)
    }

    /// Under `systemd-socket-activate`, as the issue asks: pings every half
    /// `WATCHDOG_USEC`, two periods so a constant would not pass.
    @Test(arguments: [200_000, 600_000])
    func watchdogPingsArriveEveryHalfOfWatchdogUsec(microseconds: Int) throws {
        let notify = try NotifySocket()
        let kvod = try SocketActivatedKVOD(environment: [
            "NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": String(microseconds),
        ])
        _ = try LineClient(path: kvod.socketPath)
        let ready = try notify.waitFor("READY=1")
        var pings: [ContinuousClock.Instant] = [ready.arrival]
        while pings.count < 8 {
            pings.append(try notify.waitFor("WATCHDOG=1", timeout: 10).arrival)
        }
        let intervals = zip(pings.dropFirst(), pings).map { ($0 - $1) / .milliseconds(1) }.sorted()
        let median = intervals[intervals.count / 2]
        let expected = Double(microseconds) / 2 / 1_000
        #expect(median > expected * 0.75 && median < expected * 1.5,
                "expected a ping every \(expected) ms, intervals \(intervals)")
        kvod.signal(SIGTERM)
        #expect(try kvod.waitForExit() == 0)
    }

    @Test func watchdogPIDOfAnotherProcessMeansNoPings() throws {
        let notify = try NotifySocket()
        let kvod = try KVODProcess(environment: [
            "NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1",
        ])
        try notify.waitFor("READY=1")
        // The status refresh (once a second) is the clock: by the time it
        // reports the client, a 50 ms watchdog would have pinged many times.
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"ping"}"#)
        try notify.waitFor("STATUS=Serving 1 connection, 0 observations")
        #expect(!notify.received.contains { $0.has("WATCHDOG=1") }, "\(notify.received)")
        #expect(try kvod.terminate() == 0)
    }

    @Test func sighupUnderSystemdIsLoggedAndIgnored() throws {
        let kvod = try KVODProcess(environment: ["INVOCATION_ID": "0123456789abcdef0123456789abcdef"])
        kvod.signal(SIGHUP)
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true)
        #expect(try kvod.terminate() == 0)
        #expect(kvod.stderrText().contains("SIGHUP ignored: kvod has nothing to reload"))
    }
}
