import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 15, point 2, against the real kvod: `throttle` over the socket.
@Suite struct ThrottleDaemonTests {
    /// Reads events until one carries `last` as its new value, within the
    /// read deadline; returns them.
    private func events(until last: Int, from observer: LineClient) throws -> [JSONValue] {
        var events: [JSONValue] = []
        while true {
            let event = try observer.readJSON(timeout: 10)
            events.append(event)
            if event["new"] == .number(JSONNumber(last)) { return events }
        }
    }

    @Test func throttledObserverOfAFastWriterHearsAHandfulOfEventsTheLastWithTheLastValue() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try observer.request(
            #"{"op":"observe","object":"progress","keyPath":"done","options":["new"],"throttle":200}"#).reply["ok"] == true)
        let writes = 2_000
        let started = Date()
        try writer.pipeline(count: writes) { #"{"op":"set","object":"progress","keyPath":"done","value":\#($0 + 1)}"# }
        let events = try events(until: writes, from: observer)
        let elapsed = Date().timeIntervalSince(started)
        // The first change at once, then at most one event per 200 ms.
        #expect(events.first?["new"] == 1 && events.first?["coalesced"] == nil, "\(events.first.map { "\($0)" } ?? "")")
        #expect(events.count >= 2 && Double(events.count) <= elapsed / 0.2 + 2,
                "\(events.count) events in \(elapsed) s")
        // Every write is an event or counted in one.
        let coalesced = events.reduce(0) { sum, event in
            guard case .number(let count)? = event["coalesced"] else { return sum }
            return sum + (count.intValue ?? 0)
        }
        #expect(events.count + coalesced == writes, "\(events.count) events, \(coalesced) coalesced")
        let listed = try observer.request(#"{"op":"observations"}"#)
        #expect(listed.events.isEmpty, "\(listed.events)")
        guard case .array(let entries)? = listed.reply["observations"] else {
            Issue.record("no observations in \(listed.reply)")
            return
        }
        #expect(entries.first?["throttle"] == 200, "\(listed.reply)")
    }

    @Test func aSustainedWriterGivesAboutOneEventPerIntervalAndTheLastValue() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try observer.request(
            #"{"op":"observe","object":"dial","keyPath":"v","options":["new"],"throttle":50}"#).reply["ok"] == true)
        // Batches of 100, each answered before the next: a writer that keeps
        // going for many intervals (tens of thousands of sets a second here).
        let writes = 20_000
        let started = Date()
        try writer.pipeline(count: writes, batch: 100) { #"{"op":"set","object":"dial","keyPath":"v","value":\#($0 + 1)}"# }
        let writing = Date().timeIntervalSince(started)
        let events = try events(until: writes, from: observer)
        let intervals = writing / 0.05
        print("throttle 50 ms: \(writes) sets in \(writing) s (\(Int(Double(writes) / writing)) a second), \(events.count) events")
        // At most one event per interval, and no interval with changes left without one.
        #expect(Double(events.count) <= intervals + 3, "\(events.count) events in \(intervals) intervals")
        #expect(Double(events.count) >= intervals / 2, "\(events.count) events in \(intervals) intervals")
        #expect(events.last?["new"] == .number(JSONNumber(writes)))
        let coalesced = events.reduce(0) { $0 + ($1["coalesced"]?.intValue ?? 0) }
        #expect(events.count + coalesced == writes, "\(events.count) events, \(coalesced) coalesced")
    }

    @Test func throttledReplayIsFoldedIntoItsLatestState() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        try client.pipeline(count: 100) { #"{"op":"set","object":"o","keyPath":"k","value":\#($0 + 1)}"# }
        let observed = try client.request(
            #"{"op":"observe","object":"o","keyPath":"k","options":["new"],"since":0,"throttle":100}"#)
        #expect(observed.reply["ok"] == true, "\(observed.reply)")
        // The first replayed change goes with the reply; the other 99 fold into one when the interval ends.
        let replayed = observed.events + (try events(until: 100, from: client))
        #expect(replayed.count == 2, "\(replayed)")
        #expect(replayed.first?["new"] == 1 && replayed.last?["new"] == 100 && replayed.last?["coalesced"] == 98,
                "\(replayed)")
    }

    @Test func throttleOutsideItsRangeIsRefusedNamingTheLimit() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        for value in ["0", "-5", "1.5", "\"fast\"", "3600001"] {
            let reply = try client.request(
                #"{"op":"observe","object":"o","keyPath":"k","throttle":\#(value)}"#).reply
            #expect(reply["error"]?["code"] == "bad_request", "\(value): \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("3600000") == true, "\(value): \(reply)")
        }
        let onSet = try client.request(#"{"op":"set","object":"o","keyPath":"k","value":1,"throttle":5}"#).reply
        #expect(onSet["error"]?["code"] == "bad_request", "\(onSet)")
        let listed = try client.request(#"{"op":"observations"}"#).reply
        #expect(listed["observations"] == [], "\(listed)")
    }
}
