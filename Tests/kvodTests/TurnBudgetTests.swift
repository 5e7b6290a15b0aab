import Foundation
import Glibc
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 16, item 4: one connection's burst may hold the loop for one turn's
/// budget (`TurnBudget`: 512 lines or 64 KiB), not for the whole burst.
@Suite struct TurnBudgetTests {
    /// The seq a set's reply reports.
    private func seq(_ reply: JSONValue) throws -> Int {
        guard case .number(let number)? = reply["seq"], let seq = number.intValue, reply["ok"] == true else {
            throw TestFailure("not an ok set reply: \(reply)")
        }
        return seq
    }

    /// Writes `bytes` on `burst` and a set on `lone` while kvod is stopped:
    /// it finds both waiting when it wakes, the burst's first.
    private func sendWhileStopped(_ kvod: KVODProcess, burst: LineClient, _ bytes: [UInt8], lone: LineClient) throws {
        kvod.signal(SIGSTOP)
        defer { kvod.signal(SIGCONT) }
        try #require(try burst.sendWithoutBlocking(bytes) && burst.unsent.isEmpty, "the burst fits the socket's buffer")
        try lone.send(#"{"op":"set","object":"lone","keyPath":"n","value":1}"#)
    }

    @Test func aLoneClientIsServedWhileAnotherConnectionsBurstIsStillBeingHandled() throws {
        let kvod = try KVODProcess()
        let burst = try LineClient(path: kvod.socketPath)
        let lone = try LineClient(path: kvod.socketPath)
        #expect(try burst.request(#"{"op":"ping"}"#).reply["ok"] == true)
        #expect(try lone.request(#"{"op":"ping"}"#).reply["ok"] == true)
        // Stopped, kvod finds both requests waiting when it wakes, the burst's
        // first: without a budget it handles the whole burst before the lone set.
        let count = 1_600
        var bytes: [UInt8] = []
        for index in 0..<count {
            bytes.append(contentsOf: #"{"op":"set","object":"burst","keyPath":"n","value":\#(index)}"#.utf8)
            bytes.append(10)
        }
        #expect(bytes.count > 64 << 10 && count > 3 * 512, "several turns' budget")
        try sendWhileStopped(kvod, burst: burst, bytes, lone: lone)

        let loneSeq = try seq(try lone.readJSON())
        var burstSeqs: [Int] = []
        for _ in 0..<count { burstSeqs.append(try seq(try burst.readJSON())) }
        // Every line of the burst answered, in order, and the lone set handled before its last.
        #expect(burstSeqs == burstSeqs.sorted() && Set(burstSeqs).count == count)
        #expect(loneSeq < burstSeqs.last!, "lone seq \(loneSeq), the burst's \(burstSeqs.first!)…\(burstSeqs.last!)")
    }

    /// The time share: requests that are few and small but slow (each `get`
    /// of an aggregate passes over the whole array) hold the loop for about
    /// `TurnBudget.maxNanoseconds`, not for all of them.
    @Test func aLoneClientIsServedBetweenAnotherConnectionsSlowRequests() throws {
        let kvod = try KVODProcess()
        let burst = try LineClient(path: kvod.socketPath)
        let lone = try LineClient(path: kvod.socketPath)
        let numbers = (0..<50_000).map(String.init).joined(separator: ",")
        #expect(try burst.request(#"{"op":"set","object":"agg","keyPath":"a","value":[\#(numbers)]}"#).reply["ok"] == true)
        #expect(try lone.request(#"{"op":"ping"}"#).reply["ok"] == true)
        // 20 gets of the average, then a set: far under the line and byte
        // budgets, so without the time share all of it goes before the lone set.
        let gets = 20
        var bytes: [UInt8] = []
        for _ in 0..<gets { bytes.append(contentsOf: #"{"op":"get","object":"agg","keyPath":"a.@avg"}"#.utf8 + [10]) }
        bytes.append(contentsOf: #"{"op":"set","object":"burst","keyPath":"n","value":1}"#.utf8 + [10])
        try sendWhileStopped(kvod, burst: burst, bytes, lone: lone)

        let loneSeq = try seq(try lone.readJSON(timeout: 60))
        for _ in 0..<gets {
            guard case .number(let average)? = try burst.readJSON(timeout: 60)["value"] else { throw TestFailure("no average") }
            #expect(average.doubleValue == 24_999.5)
        }
        let burstSeq = try seq(try burst.readJSON(timeout: 60))
        #expect(loneSeq < burstSeq, "the lone set waited for all \(gets) gets")
    }
}
