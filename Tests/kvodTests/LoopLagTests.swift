import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `info`'s loop lag: how long the event loop's turns worked, the longest
/// since the previous `info` and since start.
@Suite(.onDedicatedThread) struct LoopLagTests {
    private static func milliseconds(_ value: JSONValue?) throws -> Double {
        guard case .number(let number)? = value, let double = number.doubleValue else {
            throw TestFailure("not a number of milliseconds: \(String(describing: value))")
        }
        return double
    }

    @Test func requestThatHoldsTheLoopShowsAsLagAndAnIdleDaemonShowsLittle() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"info"}"#)
        let idle = try client.request(#"{"op":"info"}"#).reply
        let idleMax = try Self.milliseconds(idle["loopLagMaxMs"])
        #expect(idleMax < 50, "nothing held the loop between two infos: \(idle)")

        // One batch of 10,000 sets: one request, one turn of the loop.
        let ops = (0..<10_000).map { #"{"op":"set","object":"o\#($0 % 100)","keyPath":"k\#($0)","value":\#($0)}"# }
        let started = monotonicNanoseconds()
        let reply = try client.request(#"{"op":"batch","ops":[\#(ops.joined(separator: ","))]}"#, timeout: 60).reply
        let took = Double(monotonicNanoseconds() - started) / 1e6
        #expect(reply["ok"] == true)
        let busy = try client.request(#"{"op":"info"}"#).reply
        let lag = try Self.milliseconds(busy["loopLagMaxMs"])
        print("loop lag: idle \(idleMax) ms; a batch of 10,000 sets answered in \(took) ms showed \(lag) ms")
        #expect(lag >= took / 2 && lag <= took * 1.5, "the batch took \(took) ms at the client; lag \(lag) ms")
        #expect(try Self.milliseconds(busy["loopLagPeakMs"]) >= lag)

        // The next window starts after that info: the batch is no longer in it.
        let after = try client.request(#"{"op":"info"}"#).reply
        #expect(try Self.milliseconds(after["loopLagMaxMs"]) < lag)
        #expect(try Self.milliseconds(after["loopLagPeakMs"]) >= lag, "the peak is since start")
    }
}
