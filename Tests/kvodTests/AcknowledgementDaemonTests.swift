import Foundation
import Glibc
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Issue 15, point 3, against the real kvod: ack observations, the `ack` op,
/// and a change whose reply awaits its observers.
@Suite struct AcknowledgementDaemonTests {
    /// `count` connections, each observing `config` `version` with acks.
    private func ackObservers(_ count: Int, of kvod: KVODProcess) throws -> [LineClient] {
        try (0..<count).map { _ in
            let observer = try LineClient(path: kvod.socketPath)
            let reply = try observer.request(
                #"{"op":"observe","object":"config","keyPath":"version","options":["new"],"ack":true}"#).reply
            #expect(reply["ok"] == true, "\(reply)")
            return observer
        }
    }

    /// Reads the event of `seq` and acknowledges it.
    private func acknowledge(_ seq: Int, on observer: LineClient) throws {
        let event = try observer.readJSON()
        #expect(event["seq"] == .number(JSONNumber(seq)), "\(event)")
        let reply = try observer.request(#"{"op":"ack","id":"a","seq":\#(seq)}"#).reply
        #expect(reply["ok"] == true && reply["id"] == "a", "\(reply)")
    }

    /// Whether kvod sent `client` anything it has not read: a poll that does not wait.
    private func hasUnreadInput(_ client: LineClient) -> Bool {
        var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    /// After a round trip on `other`, kvod has flushed whatever it would have
    /// sent for requests it handled before.
    private func roundTrip(_ other: LineClient) throws {
        #expect(try other.request(#"{"op":"ping"}"#).reply["ok"] == true)
    }

    @Test func awaitAcknowledgedWithOneLateAndOneSilentObserverTimesOutWith49Of50() throws {
        let kvod = try KVODProcess()
        let observers = try ackObservers(50, of: kvod)
        let writer = try LineClient(path: kvod.socketPath)
        try writer.send(#"{"op":"set","id":"w","object":"config","keyPath":"version","value":42,"#
            + #""await":"acknowledged","awaitTimeout":4000}"#)
        for observer in observers.prefix(48) { try acknowledge(1, on: observer) }
        try roundTrip(observers[0])
        #expect(!hasUnreadInput(writer), "the reply came before the late ack")
        // The late one: after the others, before the timeout.
        try acknowledge(1, on: observers[48])
        let reply = try writer.readJSON()
        #expect(reply["id"] == "w" && reply["ok"] == false, "\(reply)")
        #expect(reply["error"]?["code"] == "timeout", "\(reply)")
        #expect(reply["error"]?["seq"] == 1 && reply["error"]?["observers"] == 50
            && reply["error"]?["acknowledged"] == 49, "\(reply)")
        // The change stays applied.
        #expect(try writer.request(#"{"op":"get","object":"config","keyPath":"version"}"#).reply["value"] == 42)
    }

    @Test func anObserverThatClosesEndsTheWaitBeforeItsTimeoutWithoutCountingAsAcknowledged() throws {
        let kvod = try KVODProcess()
        let observers = try ackObservers(50, of: kvod)
        let writer = try LineClient(path: kvod.socketPath)
        let started = Date()
        try writer.send(#"{"op":"set","id":"w","object":"config","keyPath":"version","value":42,"#
            + #""await":"acknowledged","awaitTimeout":600000}"#)
        for observer in observers.prefix(49) { try acknowledge(1, on: observer) }
        try roundTrip(observers[0])
        #expect(!hasUnreadInput(writer), "the reply came while one observer had neither acked nor gone")
        Glibc.shutdown(observers[49].fd, Int32(SHUT_RDWR))
        let reply = try writer.readJSON(timeout: 30)
        #expect(reply["ok"] == true && reply["seq"] == 1, "\(reply)")
        #expect(reply["observers"] == 50 && reply["acknowledged"] == 49, "\(reply)")
        #expect(Date().timeIntervalSince(started) < 60, "the wait ran to its timeout")
    }

    @Test func everyObserverAcknowledgingAnswersOkWith50Of50() throws {
        let kvod = try KVODProcess()
        let observers = try ackObservers(50, of: kvod)
        let writer = try LineClient(path: kvod.socketPath)
        try writer.send(#"{"op":"set","id":"w","object":"config","keyPath":"version","value":42,"#
            + #""await":"acknowledged","awaitTimeout":600000}"#)
        for observer in observers { try acknowledge(1, on: observer) }
        let reply = try writer.readJSON(timeout: 30)
        #expect(reply == ["id": "w", "ok": true, "seq": 1, "observers": 50, "acknowledged": 50], "\(reply)")
        // A later ack covers the earlier seqs: acks are cumulative.
        try writer.send(#"{"op":"batch","ops":[{"op":"set","object":"config","keyPath":"version","value":43},"#
            + #"{"op":"set","object":"config","keyPath":"version","value":44}],"await":"acknowledged"}"#)
        for observer in observers {
            _ = try observer.readJSON()
            try acknowledge(3, on: observer)
        }
        let batched = try writer.readJSON(timeout: 30)
        #expect(batched["ok"] == true && batched["seq"] == 3 && batched["seqs"] == [2, 3], "\(batched)")
        #expect(batched["observers"] == 50 && batched["acknowledged"] == 50, "\(batched)")
    }

    @Test func awaitWrittenTimesOutOnAReaderThatDoesNotReadWhileAReadingObserversAwaitSucceeds() throws {
        let kvod = try KVODProcess()
        let stalled = try LineClient(path: kvod.socketPath)
        let reading = try LineClient(path: kvod.socketPath)
        let writer = try LineClient(path: kvod.socketPath)
        #expect(try stalled.request(#"{"op":"observe","object":"o","keyPath":"big","options":["new"]}"#).reply["ok"] == true)
        #expect(try reading.request(#"{"op":"observe","object":"o","keyPath":"big"}"#).reply["ok"] == true)
        #expect(try reading.request(#"{"op":"observe","object":"o","keyPath":"small"}"#).reply["ok"] == true)
        // One event of 900 kB: more than the stalled reader's socket buffer holds, less than its output limit.
        let big = String(repeating: "x", count: 900_000)
        #expect(try writer.request(#"{"op":"set","object":"o","keyPath":"big","value":"\#(big)"}"#).reply["ok"] == true)
        let timedOut = try writer.request(
            #"{"op":"set","object":"o","keyPath":"big","value":1,"await":"written","awaitTimeout":300}"#).reply
        #expect(timedOut["error"]?["code"] == "timeout", "\(timedOut)")
        #expect(timedOut["error"]?["observers"] == 2 && timedOut["error"]?["acknowledged"] == 1, "\(timedOut)")
        let written = try writer.request(
            #"{"op":"set","object":"o","keyPath":"small","value":1,"await":"written","awaitTimeout":60000}"#).reply
        #expect(written == ["ok": true, "seq": 3, "observers": 1, "acknowledged": 1], "\(written)")
        let nobody = try writer.request(#"{"op":"set","object":"o","keyPath":"none","value":1,"await":"written"}"#).reply
        #expect(nobody == ["ok": true, "seq": 4, "observers": 0, "acknowledged": 0], "\(nobody)")
    }

    @Test func otherClientsAreAnsweredWhileAWriterWaitsAndTheWritersNextRequestWaitsForItsReply() throws {
        let kvod = try KVODProcess()
        let silent = try ackObservers(1, of: kvod)[0]
        let writer = try LineClient(path: kvod.socketPath)
        let other = try LineClient(path: kvod.socketPath)
        try writer.send(#"{"op":"set","id":1,"object":"config","keyPath":"version","value":42,"#
            + #""await":"acknowledged","awaitTimeout":600000}"#)
        try writer.send(#"{"op":"get","id":2,"object":"config","keyPath":"version"}"#)
        #expect(try other.request(#"{"op":"set","object":"x","keyPath":"k","value":1}"#).reply["ok"] == true)
        #expect(try other.request(#"{"op":"get","object":"config","keyPath":"version"}"#).reply["value"] == 42)
        try roundTrip(other)
        #expect(!hasUnreadInput(writer), "the writer was answered before its observer acked")
        #expect(try silent.readJSON()["seq"] == 1)
        #expect(try silent.request(#"{"op":"ack","seq":1}"#).reply["ok"] == true)
        let first = try writer.readJSON()
        let second = try writer.readJSON()
        #expect(first["id"] == 1 && first["acknowledged"] == 1, "\(first)")
        #expect(second["id"] == 2 && second["value"] == 42, "\(second)")
    }

    @Test func ackIsCumulativeRefusesTheFutureAndWorksWithoutAckObservations() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        #expect(try client.request(#"{"op":"ack","id":1,"seq":0}"#).reply == ["id": 1, "ok": true])
        let future = try client.request(#"{"op":"ack","seq":5}"#).reply
        #expect(future["error"]?["code"] == "bad_request", "\(future)")
        #expect(future["error"]?["message"]?.stringValue?.contains("current seq 0") == true, "\(future)")
        try client.pipeline(count: 3) { #"{"op":"set","object":"o","keyPath":"k","value":\#($0)}"# }
        #expect(try client.request(#"{"op":"observe","object":"o","keyPath":"k","ack":true}"#).reply["ok"] == true)
        #expect(try client.request(#"{"op":"ack","seq":3}"#).reply["ok"] == true)
        #expect(try client.request(#"{"op":"ack","seq":2}"#).reply["ok"] == true)
        let listed = try client.request(#"{"op":"observations"}"#).reply
        #expect(listed["observations"]?.arrayValue?.first?["ack"] == true, "\(listed)")
        #expect(listed["observations"]?.arrayValue?.first?["lastAckedSeq"] == 3, "\(listed)")
        for bad in [#"{"op":"ack"}"#, #"{"op":"ack","seq":-1}"#, #"{"op":"ack","seq":"3"}"#,
                    #"{"op":"observe","object":"o","keyPath":"j","ack":"yes"}"#, #"{"op":"get","object":"o","ack":true}"#] {
            #expect(try client.request(bad).reply["error"]?["code"] == "bad_request", "\(bad)")
        }
    }

    @Test func badAwaitOrAwaitTimeoutIsRefusedNamingTheLimitAndChangesNothing() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        for value in ["0", "-5", "1.5", "\"soon\"", "3600001"] {
            let reply = try client.request(
                #"{"op":"set","object":"o","keyPath":"k","value":1,"await":"written","awaitTimeout":\#(value)}"#).reply
            #expect(reply["error"]?["code"] == "bad_request", "\(value): \(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("3600000") == true, "\(value): \(reply)")
        }
        for line in [#"{"op":"set","object":"o","keyPath":"k","value":1,"await":"read"}"#,
                     #"{"op":"set","object":"o","keyPath":"k","value":1,"awaitTimeout":100}"#,
                     #"{"op":"get","object":"o","keyPath":"k","await":"written"}"#,
                     #"{"op":"batch","ops":[{"op":"set","object":"o","keyPath":"k","value":1,"await":"written"}]}"#] {
            #expect(try client.request(line).reply["error"]?["code"] == "bad_request", "\(line)")
        }
        let info = try client.request(#"{"op":"info"}"#).reply
        #expect(info["seq"] == 0 && info["objects"] == 0, "\(info)")
    }
}
