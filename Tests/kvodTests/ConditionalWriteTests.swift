import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 14, points 1-3, against the real kvod: modSeq, conditional writes
/// raced by real concurrent clients, and batches, also across SIGKILL.
@Suite struct ConditionalWriteDaemonTests {
    @Test func eightClientsIncrementingWithIfModSeqLoseNoUpdate() throws {
        let kvod = try KVODProcess()
        let clients = 8
        let increments = 1_000
        let done = DispatchSemaphore(value: 0)
        let failures = Recorder<String>()
        let retries = Recorder<Int>()
        for _ in 0..<clients {
            Thread {
                defer { done.signal() }
                do {
                    let client = try LineClient(path: kvod.socketPath)
                    var conflicts = 0
                    for _ in 0..<increments {
                        while true {
                            let read = try client.request(#"{"op":"get","object":"counter","keyPath":"n"}"#).reply
                            let value = read["value"]?.intValue ?? 0
                            let modSeq = read["modSeq"]?.intValue ?? read["error"]?["modSeq"]?.intValue ?? -1
                            let write = try client.request(
                                #"{"op":"set","object":"counter","keyPath":"n","value":\#(value + 1),"ifModSeq":\#(modSeq)}"#)
                                .reply
                            if write["ok"] == true { break }
                            guard write["error"]?["code"] == "precondition_failed" else {
                                throw TestFailure("unexpected reply \(write)")
                            }
                            conflicts += 1
                        }
                    }
                    retries.append(conflicts)
                } catch {
                    failures.append("\(error)")
                }
            }.start()
        }
        for _ in 0..<clients {
            #expect(done.wait(timeout: .now() + 120) == .success, "a client did not finish in time")
        }
        #expect(failures.values.isEmpty, "\(failures.values)")
        let reader = try LineClient(path: kvod.socketPath)
        let final = try reader.request(#"{"op":"get","object":"counter","keyPath":"n"}"#).reply
        #expect(final["value"]?.intValue == clients * increments)
        // The race was real: some writes lost their compare and were retried.
        #expect(retries.values.reduce(0, +) > 0, "no conflicts: the clients did not overlap")
    }

    @Test func batchIsWholeOrAbsentAfterSigkillWithDataDir() throws {
        let data = try DataDirectory()
        var acknowledged = 0
        do {
            let kvod = try KVODProcess(arguments: ["--data-dir", data.path, "--sync", "always"])
            let client = try LineClient(path: kvod.socketPath)
            let ops = (0..<500).map { #"{"op":"set","object":"b\#($0 % 7)","keyPath":"k\#($0)","value":\#($0)}"# }
                .joined(separator: ",")
            // Batches sent back to back; kvod is killed while they are being committed.
            for round in 0..<100 {
                try client.send(#"{"op":"batch","id":\#(round),"ops":[\#(ops),{"op":"set","object":"round","keyPath":"n","value":\#(round)}]}"#)
            }
            let first = try client.readJSON()
            #expect(first["ok"] == true, "\(first)")
            acknowledged = 1
            kvod.signal(SIGKILL)
            _ = try kvod.waitForExit()
        }
        let kvod = try KVODProcess(arguments: ["--data-dir", data.path])
        let client = try LineClient(path: kvod.socketPath)
        let info = try client.request(#"{"op":"info"}"#).reply
        let seq = info["seq"]?.intValue ?? -1
        // Each batch is 501 changes: a whole number of them survived, at least the acknowledged one.
        #expect(seq % 501 == 0 && seq / 501 >= acknowledged, "seq \(seq)")
        let round = try client.request(#"{"op":"get","object":"round","keyPath":"n"}"#).reply
        #expect(round["value"]?.intValue == seq / 501 - 1, "\(round)")
        let modSeq = round["modSeq"]?.intValue ?? -1
        #expect(modSeq == seq, "modSeq \(modSeq) after a restart, seq \(seq)")
    }

    @Test func getCarriesModSeqAndAFailedConditionSaysTheCurrentOne() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        let missing = try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply
        #expect(missing["error"]?["code"] == "not_found" && missing["error"]?["modSeq"] == 0)
        _ = try client.request(#"{"op": "set", "object": "o", "keyPath": "k", "value": 1, "ifModSeq": 0}"#)
        _ = try client.request(#"{"op":"set","object":"o","keyPath":"other","value":1}"#)
        let read = try client.request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply
        #expect(read["modSeq"] == 1 && read["seq"] == 2)
        let refused = try client.request(#"{"id":"x","ifModSeq":0,"op":"set","object":"o","keyPath":"k","value":2}"#).reply
        #expect(refused["error"]?["code"] == "precondition_failed" && refused["error"]?["modSeq"] == 1)
        #expect(try client.request(#"{"op":"info"}"#).reply["seq"] == 2)
    }
}
