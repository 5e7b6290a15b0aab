import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Many observers of one key, each hearing every change, in order.
@Suite struct FanOutTests {
    @Test func twoHundredClientsEachReceiveEveryChangeInOrder() throws {
        let kvod = try KVODProcess()
        let observers = try (0..<200).map { _ in try LineClient(path: kvod.socketPath) }
        for observer in observers {
            #expect(try observer.request(#"{"op":"observe","object":"counter","keyPath":"n","options":["new"]}"#).reply["ok"] == true)
        }
        let setter = try LineClient(path: kvod.socketPath)
        let changes = 100
        var firstSeq = 0
        for value in 0..<changes {
            let reply = try setter.request(#"{"op":"set","object":"counter","keyPath":"n","value":\#(value)}"#).reply
            if value == 0 { firstSeq = reply["seq"]?.intValue ?? -1 }
        }
        for observer in observers {
            for value in 0..<changes {
                let event = try observer.readJSON()
                #expect(event["new"]?.intValue == value)
                #expect(event["seq"]?.intValue == firstSeq + value)
                if event["new"]?.intValue != value { return }
            }
        }
    }
}
