import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that come and go badly, many times: nothing of them stays behind.
@Suite(.onDedicatedThread) struct ChurnTests {
    @Test func tenThousandReconnectsThatVanishHalfCloseOrDieMidLineLeaveNothingBehind() throws {
        let kvod = try KVODProcess()
        let stats = ProcessStats(pid: kvod.pid)
        let checker = try LineClient(path: kvod.socketPath)
        try waitUntil("only the checker is connected", timeout: 10) {
            // KVODProcess's readiness probes are connections too, until kvod has closed them.
            try checker.request(#"{"op":"info"}"#).reply["connections"] == 1
        }
        let listener = try LineClient(path: kvod.socketPath)
        _ = try listener.request(#"{"op":"observe","object":"churn","keyPath":"k","options":["new"]}"#)
        let observe = Array(#"{"op":"observe","object":"churn","keyPath":"k","options":["new","initial"],"context":"gone"}"#.utf8) + [10]
        let set = Array(#"{"op":"set","object":"churn","keyPath":"k","value":1}"#.utf8) + [10]

        /// One client's life, ended one of four ways.
        func churn(_ index: Int) throws {
            let client = try LineClient(path: kvod.socketPath)
            switch index % 4 {
            case 0:
                // Observes and vanishes without reading a byte.
                try client.write(observe)
            case 1:
                // Dies in the middle of a request line.
                try client.write(observe + Array(observe.prefix(40)))
            case 2:
                // Half-closes after its requests and reads the replies to the end.
                try client.write(observe + set)
                client.shutdownWrite()
                _ = try client.waitForEndOfStream(timeout: 10)
            default:
                // Connects and leaves at once.
                break
            }
        }
        // Warm up the allocator, then measure from a settled baseline.
        for index in 0..<500 { try churn(index) }
        let baseline = try settle(kvod, checker, stats)
        let started = Date()
        let reconnects = TestEnvironment.scaled(10_000, dividedUnderSanitizerBy: 10)
        for index in 0..<reconnects { try churn(index) }
        let elapsed = Date().timeIntervalSince(started)
        let after = try settle(kvod, checker, stats)
        print("\(reconnects) reconnects in \(elapsed) s: descriptors \(baseline.descriptors) → \(after.descriptors), RSS \(baseline.resident) → \(after.resident)")
        #expect(after.descriptors == baseline.descriptors)
        if TestEnvironment.residentMemoryIsMeaningful { #expect(after.resident - baseline.resident < 4 << 20) }
        // The listener's observation is intact and heard every set of the half-closing clients.
        let heard = try listener.request(#"{"op":"ping"}"#).events
        #expect(heard.count == (500 + reconnects) / 4)
        #expect(heard.allSatisfy { $0["new"] == 1 })
    }

    /// Waits until kvod counts only the checker, the listener and its one observation, then
    /// reads its descriptor count and resident memory.
    private func settle(_ kvod: KVODProcess, _ checker: LineClient,
                        _ stats: ProcessStats) throws -> (descriptors: Int, resident: Int) {
        try waitUntil("every churned connection is gone", timeout: 30) {
            let info = try checker.request(#"{"op":"info"}"#).reply
            return info["connections"] == 2 && info["observations"] == 1
        }
        // `info` counts a connection gone when kvod starts closing it; its
        // socket goes one loop turn later.
        var descriptors = try stats.openDescriptorCount()
        try waitUntil("kvod's descriptor count is steady", timeout: 10) {
            _ = try checker.request(#"{"op":"ping"}"#)
            let now = try stats.openDescriptorCount()
            defer { descriptors = now }
            return now == descriptors
        }
        return (descriptors, try stats.residentBytes())
    }
}
