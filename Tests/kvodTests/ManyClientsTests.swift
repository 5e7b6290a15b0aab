import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Thousands of clients, and more clients than kvod may or can hold.
@Suite(.serialized, .onDedicatedThread) struct ManyClientsTests {
    @Test func fiveThousandConnectionsEachObservingReceiveTheirEvents() throws {
        let count = TestEnvironment.scaled(5_000, dividedUnderSanitizerBy: 10)
        let keys = 50
        try #require(hardOpenFilesLimit() > count + 100, "the open-file limit here is \(hardOpenFilesLimit())")
        let kvod = try KVODProcess()
        let checker = try LineClient(path: kvod.socketPath)
        let stats = ProcessStats(pid: kvod.pid)
        let crowd = try Crowd(socketPath: kvod.socketPath, count: count, keys: keys)
        let info = try checker.request(#"{"op":"info"}"#).reply
        #expect(info["connections"]?.intValue == count + 1)
        #expect(info["observations"]?.intValue == count)
        let descriptorsWithAll = try stats.openDescriptorCount()
        for key in 0..<keys {
            _ = try checker.request(#"{"op":"set","object":"crowd","keyPath":"k\#(key)","value":\#(key)}"#)
        }
        // Each of them gets the one change of its own key.
        try crowd.expectEvents(1)
        // Those it has are all still served.
        _ = try checker.request(#"{"op":"set","object":"crowd","keyPath":"k7","value":"again"}"#)
        #expect(try checker.request(#"{"op":"ping","id":"still"}"#).reply["id"] == "still")
        print("\(count) clients: kvod RSS \(try stats.residentBytes()) bytes, \(descriptorsWithAll) descriptors")
        try crowd.disperse()
        try waitUntil("kvod has closed the \(count) connections", timeout: 30) {
            let now = try checker.request(#"{"op":"info"}"#).reply
            return now["connections"] == 1 && now["observations"] == 0
        }
        // One descriptor per client, all given back.
        try waitUntil("kvod has closed the \(count) sockets", timeout: 10) {
            try stats.openDescriptorCount() == descriptorsWithAll - count
        }
    }

    @Test func clientsBeyondMaxConnectionsAreRefusedWithAReasonAndLaterServed() throws {
        let kvod = try KVODProcess(arguments: ["--max-connections", "20"])
        let first = try LineClient(path: kvod.socketPath)
        // KVODProcess's readiness probes are connections too, until kvod has closed them.
        try waitUntil("only the first client is connected", timeout: 10) {
            try first.request(#"{"op":"info"}"#).reply["connections"] == 1
        }
        var clients = try [first] + (1..<20).map { _ in try LineClient(path: kvod.socketPath) }
        for client in clients { #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true) }
        let refused = try LineClient(path: kvod.socketPath)
        let reason = try refused.readJSON()
        #expect(reason["error"]?["code"] == "limit_exceeded")
        #expect(reason["error"]?["message"]?.stringValue?.contains("at most 20 connections") == true)
        #expect(try refused.waitForEndOfStream(timeout: 5))
        #expect(kvod.stderrText().contains("refused a client: kvod serves at most 20 connections"))
        #expect(try first.request(#"{"op":"info"}"#).reply["refused"]?["connections"] == 1)
        // Those it has are still served.
        for client in clients { #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true) }
        clients.removeLast(5)
        try waitUntil("kvod takes a new client once others left", timeout: 10) {
            let client = try LineClient(path: kvod.socketPath)
            guard (try? client.request(#"{"op":"ping","id":"new"}"#).reply["id"]) == "new" else { return false }
            clients.append(client)
            return true
        }
        // The new client can be served once kvod has seen one of the five leave, before it has seen all.
        try waitUntil("kvod counts the 15 left and the new one", timeout: 10) {
            try clients[0].request(#"{"op":"info"}"#).reply["connections"] == 16
        }
    }

    /// The open-file limit hit on purpose (kvod under `ulimit -n 64`, with
    /// --max-connections far above it): kvod keeps serving, closes the
    /// connections it cannot take, does not spin, and takes clients again
    /// once descriptors are free.
    @Test func openFileLimitReachedKeepsServingRefusesWithoutSpinningAndRecovers() throws {
        let kvod = try KVODProcess(arguments: ["--max-connections", "1000"], openFilesLimit: 64)
        let stats = ProcessStats(pid: kvod.pid)
        var served: [LineClient] = []
        var refusedInARow = 0
        while refusedInARow < 10 {
            let client = try LineClient(path: kvod.socketPath)
            if (try? client.request(#"{"op":"ping","id":"in"}"#, timeout: 5).reply["id"]) == "in" {
                served.append(client)
                refusedInARow = 0
            } else {
                refusedInARow += 1
            }
            #expect(served.count < 64, "kvod took more clients than it has descriptors")
            if served.count >= 64 { return }
        }
        print("open-file limit 64: kvod serves \(served.count) clients, \(try stats.openDescriptorCount()) descriptors")
        #expect(served.count >= 40)
        // At the limit: a flood of attempts is refused (closed) promptly, and the
        // daemon does not spin on the listening socket: once the flood is
        // refused, answering requests one at a time costs a few loop turns
        // each, where a loop woken by a socket left readable turns without end.
        var pending: [LineClient] = []
        for _ in 0..<200 {
            let client = try LineClient(path: kvod.socketPath)
            try? client.send(#"{"op":"ping"}"#)  // EPIPE if kvod closed it already
            pending.append(client)
        }
        for client in pending { #expect(try client.waitForEndOfStream(timeout: 10)) }
        let turnsBefore = try #require(served[0].request(#"{"op":"info"}"#).reply["loopTurns"]?.intValue)
        let cpuBefore = try stats.cpuSeconds()
        let requests = 200
        for index in 0..<requests {
            #expect(try served[index % served.count].request(#"{"op":"ping"}"#).reply["ok"] == true)
        }
        let turns = try #require(served[0].request(#"{"op":"info"}"#).reply["loopTurns"]?.intValue) - turnsBefore
        let cpu = try stats.cpuSeconds() - cpuBefore
        print("at the open-file limit, after 200 refused connections: \(requests) pings took kvod \(turns) loop turns and \(cpu) s of CPU")
        #expect(turns > requests, "loopTurns does not count the loop's turns")
        #expect(turns <= 4 * requests + 8, "kvod's loop turned \(turns) times for \(requests) requests: it spins")
        // Those it has are still served, and observe each other's changes.
        _ = try served[0].request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        _ = try served[1].request(#"{"op":"set","object":"o","keyPath":"k","value":1}"#)
        #expect(try served[0].readJSON()["new"] == 1)
        for client in served { #expect(try client.request(#"{"op":"ping"}"#).reply["ok"] == true) }
        // Descriptors free up: kvod takes clients again.
        let before = served.count
        served.removeLast(10)
        try waitUntil("kvod has closed the 10 connections", timeout: 10) {
            try served[0].request(#"{"op":"info"}"#).reply["connections"]?.intValue == before - 10
        }
        var newcomers: [LineClient] = []
        for _ in 0..<8 {
            let client = try LineClient(path: kvod.socketPath)
            #expect(try client.request(#"{"op":"ping","id":"back"}"#).reply["id"] == "back")
            newcomers.append(client)
        }
    }
}
