import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 15, point 4, against the real kvod: `info`'s event totals and the
/// connections being coalesced now.
@Suite struct HealthInfoTests {
    private static func count(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value else { return nil }
        return number.intValue
    }

    @Test func infoCountsTheEventsSentAndTheEventsCoalescedIntoThem() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"throttle":100}"#)
        let before = try writer.request(#"{"op":"info"}"#).reply
        #expect(before["eventsSent"] == 0 && before["eventsCoalesced"] == 0 && before["coalescingConnections"] == 0,
                "\(before)")
        try writer.pipeline(count: 500) { #"{"op":"set","object":"o","keyPath":"k","value":\#($0 + 1)}"# }
        var events = 0
        while true {
            let event = try observer.readJSON()
            events += 1
            if event["new"] == 500 { break }
        }
        let after = try writer.request(#"{"op":"info"}"#).reply
        #expect(Self.count(after["eventsSent"]) == events, "\(events) events: \(after)")
        #expect(Self.count(after["eventsCoalesced"]) == 500 - events, "\(events) events: \(after)")
    }

    @Test func aClientThatStopsReadingCountsAsCoalescingUntilItLeaves() throws {
        let kvod = try KVODProcess(arguments: ["--output-hard-limit", "256k", "--output-soft-limit", "64k"])
        var stuck: LineClient? = try LineClient(path: kvod.socketPath)
        _ = try stuck?.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"]}"#)
        let writer = try LineClient(path: kvod.socketPath)
        let padding = String(repeating: "x", count: 1000)
        var sets = 0
        try waitUntil("the stuck client is coalescing", timeout: 30) {
            try writer.pipeline(count: 200) { #"{"op":"set","object":"o","keyPath":"k","value":"\#(sets + $0)\#(padding)"}"# }
            sets += 200
            return Self.count(try writer.request(#"{"op":"info"}"#).reply["coalescingConnections"]) == 1
        }
        stuck = nil
        try waitUntil("the stuck client no longer counts", timeout: 10) {
            Self.count(try writer.request(#"{"op":"info"}"#).reply["coalescingConnections"]) == 0
        }
    }

    @Test func eachObservationTellsItsEventsAndTheyAddUpToInfosTotals() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"k","options":["new"],"throttle":100}"#)
        _ = try observer.request(#"{"op":"observe","object":"o","keyPath":"quiet","ack":true}"#)
        try writer.pipeline(count: 300) { #"{"op":"set","object":"o","keyPath":"k","value":\#($0 + 1)}"# }
        var events = 0
        while true {
            let event = try observer.readJSON()
            events += 1
            if event["new"] == 300 { break }
        }
        #expect(try observer.request(#"{"op":"ack","seq":300}"#).reply["ok"] == true)
        let listed = try observer.request(#"{"op":"observations"}"#).reply["observations"]?.arrayValue ?? []
        #expect(listed.count == 2, "\(listed)")
        let throttled = listed.first ?? .null
        #expect(Self.count(throttled["eventsSent"]) == events && Self.count(throttled["eventsCoalesced"]) == 300 - events
            && throttled["lastSeqSent"] == 300 && throttled["lastAckedSeq"] == nil, "\(events) events: \(throttled)")
        let quiet = listed.last ?? .null
        #expect(quiet["eventsSent"] == 0 && quiet["lastSeqSent"] == 0 && quiet["ack"] == true
            && quiet["lastAckedSeq"] == 300, "\(quiet)")
        let info = try writer.request(#"{"op":"info"}"#).reply
        #expect(Self.count(info["eventsSent"]) == events && Self.count(info["eventsCoalesced"]) == 300 - events,
                "\(events) events: \(info)")
    }
}
