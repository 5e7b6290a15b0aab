import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Issue 33 row 11 against the daemon: `initial` over a large prefix and
/// `unobserveAll` of a connection's observations are done a slice per loop
/// turn, so that what comes after them is served in between. Each test
/// asserts the slicing by order, not by time: before the change the whole
/// work was done in the request's turn, and what was pipelined behind it
/// came after all of it.
@Suite(.onDedicatedThread) struct SlicedTurnTests {
    /// Objects under the prefix: several slices (``SharedController/sliceBudget``).
    static let objects = 20_000

    @Test func aPingPipelinedAfterAnInitialOverManyObjectsIsAnsweredBeforeTheirLastEvent() throws {
        let kvod = try KVODProcess()
        let writer = try LineClient(path: kvod.socketPath)
        try writer.pipeline(count: Self.objects / 10_000, batch: 1) { batch in
            let ops = (0..<10_000).map { #"{"op":"set","object":"p/\#(batch * 10_000 + $0)","keyPath":"v","value":\#($0)}"# }
            return #"{"op":"batch","ops":[\#(ops.joined(separator: ","))]}"#
        }
        let watcher = try LineClient(path: kvod.socketPath)
        _ = try watcher.request(#"{"op":"info"}"#)
        try watcher.write(Array((#"{"op":"observe","prefix":"p/","keyPath":"v","options":["new","initial"],"id":1}"#
            + "\n" + #"{"op":"ping","id":2}"# + "\n").utf8))
        var events = 0, eventsBeforePing: Int?
        while events < Self.objects || eventsBeforePing == nil {
            let line = try watcher.readJSON(timeout: 60)
            if line["ok"] == nil {
                events += 1
            } else if line["id"] == 2 {
                eventsBeforePing = events
            } else {
                #expect(line["ok"] == true, "\(line)")
            }
        }
        let info = try watcher.request(#"{"op":"info"}"#).reply
        print("initial over \(Self.objects) objects: the pipelined ping came after \(eventsBeforePing ?? -1) events; "
            + "longest turn since: \(info["loopCpuMaxMs"] ?? nil) ms of CPU, \(info["loopLagMaxMs"] ?? nil) ms of wall time")
        #expect(events == Self.objects)
        #expect(eventsBeforePing ?? Self.objects < Self.objects / 2,
                "written whole before what followed it: the ping came after \(eventsBeforePing ?? -1) events")
    }

    @Test func unobserveAllLeavesTheIndexInSlicesAndItsObservationsAreGoneAtOnce() throws {
        let kvod = try KVODProcess()
        let watcher = try LineClient(path: kvod.socketPath)
        let keyPaths = "[" + (0..<1_000).map { "\"k\($0)\"" }.joined(separator: ",") + "]"
        try watcher.pipeline(count: 100, batch: 10) { #"{"op":"observe","object":"o\#($0)","keyPaths":\#(keyPaths)}"# }
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try writer.request(#"{"op":"info"}"#).reply["observations"] == 100_000)

        // The info read with it, in the same turn, still finds them in the index (their bytes), none observed.
        try watcher.write(Array((#"{"op":"unobserveAll","id":1}"# + "\n" + #"{"op":"info","id":2}"# + "\n").utf8))
        #expect(try watcher.readJSON()["id"] == 1)
        let during = try watcher.readJSON()
        #expect(during["observations"] == 0)
        let heldBytes = during["memory"]?["observations"]?.intValue ?? 0
        #expect(heldBytes > 0, "unregistered whole in the request's turn: \(during)")

        // No event for what was unobserved; observed again, one event, not two.
        _ = try writer.request(#"{"op":"set","object":"o0","keyPath":"k0","value":1}"#)
        #expect(try watcher.request(#"{"op":"ping"}"#).events.isEmpty)
        #expect(try watcher.request(#"{"op":"observe","object":"o0","keyPath":"k0","options":["new"]}"#).reply["ok"] == true)
        _ = try writer.request(#"{"op":"set","object":"o0","keyPath":"k0","value":2}"#)
        let events = try watcher.request(#"{"op":"ping"}"#).events
        #expect(events.count == 1 && events.first?["new"] == 2, "\(events)")

        let deadline = monotonicNanoseconds() + 30_000_000_000
        var info = try writer.request(#"{"op":"info"}"#).reply
        while (info["memory"]?["observations"]?.intValue ?? 0) >= heldBytes / 1_000, monotonicNanoseconds() < deadline {
            info = try writer.request(#"{"op":"info"}"#).reply
        }
        #expect(info["observations"] == 1)
        #expect((info["memory"]?["observations"]?.intValue ?? .max) < heldBytes / 1_000, "\(info)")
        print("unobserveAll of 100,000 observations: longest turn since \(info["loopCpuMaxMs"] ?? nil) ms of CPU")
    }

    @Test func aClosedConnectionsObservationsLeaveTheIndexWhileOthersAreServed() throws {
        let kvod = try KVODProcess()
        let other = try LineClient(path: kvod.socketPath)
        do {
            let closing = try LineClient(path: kvod.socketPath)
            let keyPaths = "[" + (0..<1_000).map { "\"k\($0)\"" }.joined(separator: ",") + "]"
            try closing.pipeline(count: 100, batch: 10) { #"{"op":"observe","object":"o\#($0)","keyPaths":\#(keyPaths)}"# }
            _ = try other.request(#"{"op":"info"}"#)
        }
        let deadline = monotonicNanoseconds() + 30_000_000_000
        var info = try other.request(#"{"op":"info"}"#).reply
        while info["memory"]?["observations"]?.intValue != 0, monotonicNanoseconds() < deadline {
            #expect(try other.request(#"{"op":"set","object":"o1","keyPath":"k1","value":1}"#).reply["ok"] == true)
            info = try other.request(#"{"op":"info"}"#).reply
        }
        #expect(info["memory"]?["observations"] == 0, "\(info)")
        #expect(info["observations"] == 0)
        print("close with 100,000 observations: longest turn since \(info["loopCpuMaxMs"] ?? nil) ms of CPU")
    }
}
