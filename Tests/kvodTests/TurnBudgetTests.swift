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
        kvod.signal(SIGSTOP)
        var stopped = true
        defer { if stopped { kvod.signal(SIGCONT) } }
        try #require(try burst.sendWithoutBlocking(bytes) && burst.unsent.isEmpty, "the burst fits the socket's buffer")
        try lone.send(#"{"op":"set","object":"lone","keyPath":"n","value":1}"#)
        kvod.signal(SIGCONT)
        stopped = false

        let loneSeq = try seq(try lone.readJSON())
        var burstSeqs: [Int] = []
        for _ in 0..<count { burstSeqs.append(try seq(try burst.readJSON())) }
        // Every line of the burst answered, in order, and the lone set handled before its last.
        #expect(burstSeqs == burstSeqs.sorted() && Set(burstSeqs).count == count)
        #expect(loneSeq < burstSeqs.last!, "lone seq \(loneSeq), the burst's \(burstSeqs.first!)…\(burstSeqs.last!)")
    }
}
