import KVOEngine
import KVOValues
import KVOTestSupport
import Testing

/// Watches that get the same events share their frames (`HTTPFrameCache`):
/// each still gets every event once, with its own ids, and a watch whose
/// lines or place in a seq differ gets its own frames, not another's.
@Suite struct HTTPFanOutTests {
    @Test func watchesGettingTheSameEventsEachGetThemAllWithTheirOwnIds() throws {
        let (kvod, base) = try HTTPTests.start()
        let port = try HTTPTests.port(of: base)
        let auth = "Authorization: Bearer \(HTTPTests.token)"
        let socket = try LineClient(path: kvod.socketPath)
        _ = try socket.request(#"{"op":"set","object":"f","value":{"v":0,"w":0}}"#)
        let epoch = try #require(try socket.request(#"{"op":"info"}"#).reply["epoch"]?.stringValue)
        let same = try (0..<3).map { _ in
            try HTTPTests.EventReader(port: port, target: "/v1/watch?object=f&keyPath=v", headers: [auth])
        }
        // Two key paths: two events a seq, its lines other than the others' watches'.
        let both = try HTTPTests.EventReader(port: port, target: "/v1/watch?object=f&keyPath=v&keyPath=w", headers: [auth])
        // Twenty changes written at once, so that the watches get them in the same turn's writes.
        try socket.pipeline(count: 20) { #"{"op":"set","object":"f","value":{"v":\#($0 + 1),"w":\#($0 + 1)}}"# }
        for watch in same {
            let events = try (0..<20).map { _ in try watch.next() }
            #expect(events.map { $0["id"] } == (2...21).map { "\(epoch):\($0):1" })
            for (index, event) in events.enumerated() {
                #expect(try JSONReader.parse(event["data"] ?? "")["new"] == JSONValue(integerLiteral: index + 1))
            }
        }
        let pairs = try (0..<40).map { _ in try both.next()["id"] }
        #expect(pairs == (2...21).flatMap { ["\(epoch):\($0):1", "\(epoch):\($0):2"] })
        // A watch resumed after the first event of a seq, beside one that was not: their counts differ.
        let resumed = try HTTPTests.EventReader(port: port, target: "/v1/watch?object=f&keyPath=v&keyPath=w",
                                                headers: [auth, "Last-Event-ID: \(epoch):21:1"])
        let fresh = try HTTPTests.EventReader(port: port, target: "/v1/watch?object=f&keyPath=v&keyPath=w", headers: [auth])
        try socket.pipeline(count: 2) { #"{"op":"set","object":"f","value":{"v":\#($0 + 30),"w":\#($0 + 30)}}"# }
        #expect(try (0..<5).map { _ in try resumed.next()["id"] }
            == ["\(epoch):21:2", "\(epoch):22:1", "\(epoch):22:2", "\(epoch):23:1", "\(epoch):23:2"])
        #expect(try (0..<4).map { _ in try fresh.next()["id"] }
            == ["\(epoch):22:1", "\(epoch):22:2", "\(epoch):23:1", "\(epoch):23:2"])
    }
}
