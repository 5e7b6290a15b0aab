import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// `add` against the real kvod over its socket (docs/PROTOCOL.md, "Counters"):
/// concurrent adds sum exactly, each one change with its own event, refusals
/// change nothing, and the sums survive a restart.
@Suite(.onDedicatedThread) struct AddDaemonTests {
    /// 2^53, the largest magnitude an add keeps.
    static let limit = 9_007_199_254_740_992

    @Test func addsFromEightConnectionsAtOnceSumExactlyEachWithOneEvent() throws {
        let kvod = try KVODProcess()
        let observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"hits","keyPath":"n","options":["new","old"]}"#)
        let (clients, adds) = (8, 500)
        let done = DispatchSemaphore(value: 0)
        let failures = Recorder<String>()
        for client in 0..<clients {
            Thread {
                defer { done.signal() }
                do {
                    // Pipelined, a hundred at a time: the adds of all eight interleave in kvod.
                    try LineClient(path: kvod.socketPath).pipeline(count: adds, batch: 100) { _ in
                        #"{"op":"add","object":"hits","keyPath":"n","by":\#(client + 1)}"#
                    }
                } catch {
                    failures.append("\(error)")
                }
            }.start()
        }
        for _ in 0..<clients {
            #expect(done.wait(timeout: .now() + 60) == .success, "a client did not finish in time")
        }
        #expect(failures.values.isEmpty, "\(failures.values)")
        let total = adds * (1...clients).reduce(0, +)
        let reader = try LineClient(path: kvod.socketPath)
        let final = try reader.request(#"{"op":"get","object":"hits","keyPath":"n"}"#).reply
        #expect(final["value"]?.intValue == total && final["modSeq"]?.intValue == clients * adds, "\(final)")
        // One event per add, in seq order, each from the value before it to the sum it wrote.
        var previous = 0
        for index in 1...(clients * adds) {
            let event = try observer.readJSON()
            let old = event["old"] == .null ? 0 : event["old"]?.intValue ?? -1
            let step = (event["new"]?.intValue ?? -1) - old
            guard event["seq"]?.intValue == index, old == previous, (1...clients).contains(step) else {
                Issue.record("event \(index): \(event) after \(previous)")
                return
            }
            previous = event["new"]?.intValue ?? -1
        }
        #expect(previous == total)
    }

    @Test func aMissingValueCountsAsZeroAndTheReplyCarriesTheSum() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let first = try client.request(#"{"op":"add","id":1,"object":"stats/web","keyPath":"requests.get","by":3}"#)
        #expect(first.reply == ["id": 1, "ok": true, "value": 3, "modSeq": 1, "seq": 1], "\(first.reply)")
        let document = try client.request(#"{"op":"get","object":"stats/web"}"#).reply
        #expect(document["value"] == ["requests": ["get": 3]], "\(document)")
        let second = try client.request(#"{"op":"add","object":"stats/web","keyPath":"requests.get","by":-5}"#).reply
        #expect(second["value"] == -2 && second["modSeq"] == 2 && second["seq"] == 2, "\(second)")
    }

    @Test func valuesThatAreNoIntegerAndSumsPast2To53AreRefusedAndChangeNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"set","object":"c","value":{"name":"web","ratio":0.5,"n":9007199254740990}}"#)
        let observer = try LineClient(path: kvod.socketPath)
        _ = try observer.request(#"{"op":"observe","object":"c","options":["new"]}"#)
        for (request, said) in [
            (#"{"op":"add","object":"c","keyPath":"name","by":1}"#, "c name is string, not a number"),
            (#"{"op":"add","object":"c","keyPath":"ratio","by":1}"#, "c ratio is 0.5, not an integer"),
            (#"{"op":"add","object":"c","keyPath":"n","by":3}"#,
             "c n would be 9007199254740993 (9007199254740990 + 3), past 2^53 (9007199254740992)"),
            (#"{"op":"add","object":"c","keyPath":"n","by":9007199254740993}"#, "field \"by\" must be an integer"),
            (#"{"op":"add","object":"c","keyPath":"n","by":1.0}"#, "field \"by\" must be an integer"),
            (#"{"op":"add","object":"c","keyPath":"name.first","by":1}"#, "c: name is string, not an object"),
        ] {
            let reply = try client.request(request).reply
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(message.hasPrefix(said), "\(request): \(reply)")
            #expect(["bad_request", "not_an_object"].contains(reply["error"]?["code"]?.stringValue ?? ""), "\(reply)")
        }
        // Exactly up to 2^53, and back down past zero to −2^53.
        let top = try client.request(#"{"op":"add","object":"c","keyPath":"n","by":2}"#).reply
        #expect(top["value"]?.intValue == Self.limit && top["seq"] == 2, "\(top)")
        let bottom = try client.request(#"{"op":"add","object":"c","keyPath":"n","by":-9007199254740992}"#).reply
        #expect(bottom["value"] == 0, "\(bottom)")
        let low = try client.request(#"{"op":"add","object":"c","keyPath":"n","by":-9007199254740992}"#).reply
        #expect(low["value"]?.intValue == -Self.limit, "\(low)")
        #expect(try client.request(#"{"op":"add","object":"c","keyPath":"n","by":-1}"#).reply["ok"] == false)
        // The refusals made no change: the observer's events are the three adds that were applied.
        let seqs = try (0..<3).map { _ in try observer.readJSON()["seq"]?.intValue }
        #expect(seqs == [2, 3, 4])
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["seq"] == 4, "\(info)")
    }

    @Test func aFailingConditionChangesNothingAndABatchAddsAllOrNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"add","object":"q","keyPath":"next","by":1,"ifModSeq":0}"#)
        let refused = try client.request(#"{"op":"add","object":"q","keyPath":"next","by":1,"ifModSeq":0}"#).reply
        #expect(refused["error"]?["code"] == "precondition_failed" && refused["error"]?["modSeq"] == 1, "\(refused)")
        let held = try client.request(#"{"op":"add","object":"q","keyPath":"next","by":1,"ifValue":1}"#).reply
        #expect(held["value"] == 2, "\(held)")
        // A ticket and its job in one batch: the reply tells the ticket.
        let batch = try client.request(#"{"op":"batch","ops":[{"op":"add","object":"q","keyPath":"next","by":1},"#
            + #"{"op":"insert","object":"q","keyPath":"jobs","value":"backup"}]}"#).reply
        #expect(batch == ["ok": true, "seq": 4, "seqs": [3, 4], "values": [3, .null]], "\(batch)")
        let failed = try client.request(#"{"op":"batch","ops":[{"op":"add","object":"q","keyPath":"next","by":1},"#
            + #"{"op":"add","object":"q","keyPath":"jobs","by":1}]}"#).reply
        #expect(failed["error"]?["code"] == "bad_request" && failed["error"]?["index"] == 1, "\(failed)")
        let next = try client.request(#"{"op":"get","object":"q","keyPath":"next"}"#).reply
        #expect(next["value"] == 3 && next["seq"] == 4, "the batch's first add was not applied: \(next)")
    }

    @Test func sumsSurviveARestartWithADataDirectoryAndReplayAsTheirEvents() throws {
        let data = try DataDirectory()
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
            let client = try LineClient(path: kvod.socketPath)
            try client.pipeline(count: 100) { _ in #"{"op":"add","object":"c","keyPath":"n","by":2}"# }
            #expect(try kvod.terminate() == 0)
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        let after = try client.request(#"{"op":"add","object":"c","keyPath":"n","by":1}"#).reply
        #expect(after["value"] == 201 && after["seq"] == 101, "\(after)")
        let replay = try client.request(
            #"{"op":"observe","object":"c","keyPath":"n","options":["new","old"],"since":98}"#)
        #expect(replay.events.map { $0["new"] } == [198, 200, 201], "\(replay.events)")
        #expect(replay.events.map { $0["old"] } == [196, 198, 200], "\(replay.events)")
    }
}
