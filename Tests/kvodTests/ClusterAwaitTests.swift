import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `await` over etcd (docs/CLUSTER.md, "await over etcd"): the reply waits
/// for the observers of the kvod that took the write, as in local mode; the
/// observers of other kvods are not counted. Two kvods on one etcd member,
/// the writer on kvod A.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterAwaitTests {
    /// Observers of `o` `k`: an ack observation on A (waited for), a plain
    /// one on A (waited for by `written` only), an ack observation on B (not counted).
    struct Observers {
        let ackOnA: LineClient
        let plainOnA: LineClient
        let ackOnB: LineClient

        init(a: String, b: String) throws {
            ackOnA = try LineClient(path: a)
            plainOnA = try LineClient(path: a)
            ackOnB = try LineClient(path: b)
            for (observer, ack) in [(ackOnA, true), (plainOnA, false), (ackOnB, true)] {
                let reply = try observer.request(
                    #"{"op":"observe","object":"o","keyPath":"k","options":["new"],"ack":\#(ack)}"#).reply
                #expect(reply["ok"] == true, "\(reply)")
            }
        }

        /// Each reads the event of one change; returns its seq.
        func readEvents(new value: JSONValue) throws -> Int? {
            let events = try [ackOnA, plainOnA, ackOnB].map { try $0.readJSON(timeout: 30) }
            #expect(events.allSatisfy { $0["new"] == value && $0["seq"] == events[0]["seq"] }, "\(events)")
            return events[0]["seq"]?.intValue
        }
    }

    @Test func anAwaitedChangeRepliesOnceTheObserversOfTheWritersKvodAreSettledAndCountsOnlyThem() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkAwaitsCountTheWritersKvod(a.socketPath, b.socketPath)
    }

    @Test func anAwaitedChangeWhoseObserverDoesNotAckTimesOutAndStaysApplied() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkTimeout(a.socketPath, b.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    private static func number(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }

    /// The observers, and a writer on `a` that sets `o` `k` to 1 with
    /// `await: acknowledged` and `timeout`; returns them once every observer
    /// has the event, and its seq.
    private static func setAwaitingAcks(_ a: String, _ b: String,
                                        timeout: Int) throws -> (Observers, LineClient, Int) {
        let observers = try Observers(a: a, b: b)
        let writer = try LineClient(path: a)
        try writer.send(#"{"op":"set","id":1,"object":"o","keyPath":"k","value":1,"await":"acknowledged","#
            + #""awaitTimeout":\#(timeout)}"#)
        return (observers, writer, try #require(try observers.readEvents(new: 1)))
    }

    private static func checkAwaitsCountTheWritersKvod(_ a: String, _ b: String) throws {
        // acknowledged: A's ack observer acks once B's has the event too; B's never acks.
        let (observers, writer, seq) = try setAwaitingAcks(a, b, timeout: 60000)
        #expect(try observers.ackOnA.request(#"{"op":"ack","seq":\#(seq)}"#).reply["ok"] == true)
        let acknowledged = try writer.readJSON(timeout: 30)
        #expect(acknowledged == ["id": 1, "ok": true, "seq": number(seq), "observers": 1, "acknowledged": 1],
                "\(acknowledged)")
        // written: both of A's observations, whatever they read; not B's.
        let written = try writer.request(#"{"op":"set","id":2,"object":"o","keyPath":"k","value":2,"await":"written"}"#,
                                         timeout: 30).reply
        let second = try #require(try observers.readEvents(new: 2))
        #expect(written == ["id": 2, "ok": true, "seq": number(second), "observers": 2, "acknowledged": 2],
                "\(written)")
        // A batch waits for the ack of its revision.
        try writer.send(#"{"op":"batch","id":3,"await":"acknowledged","ops":["#
            + #"{"op":"set","object":"o","keyPath":"k","value":3},{"op":"set","object":"p","keyPath":"k","value":3}]}"#)
        let third = try #require(try observers.readEvents(new: 3))
        #expect(try observers.ackOnA.request(#"{"op":"ack","seq":\#(third)}"#).reply["ok"] == true)
        let batch = try writer.readJSON(timeout: 30)
        #expect(batch == ["id": 3, "ok": true, "seq": number(third), "seqs": [number(third), number(third)],
                          "observers": 1, "acknowledged": 1], "\(batch)")
        // In a row, changes nobody observes: each wait ends as its revision is applied, often before
        // etcd's answer to the Txn comes; each reply comes all the same, and the writer is read again.
        for value in 1...20 {
            let reply = try writer.request(#"{"op":"set","object":"q","keyPath":"k","value":\#(value),"#
                + #""await":"written"}"#, timeout: 30).reply
            #expect(reply["ok"] == true && reply["observers"] == 0, "\(reply)")
        }
    }

    private static func checkTimeout(_ a: String, _ b: String) throws {
        let (observers, writer, seq) = try setAwaitingAcks(a, b, timeout: 1500)
        // B's observer acks: no help, it is not counted.
        #expect(try observers.ackOnB.request(#"{"op":"ack","seq":\#(seq)}"#).reply["ok"] == true)
        let reply = try writer.readJSON(timeout: 30)
        #expect(reply["id"] == 1 && reply["error"]?["code"] == "timeout", "\(reply)")
        #expect(reply["error"]?["seq"]?.intValue == seq && reply["error"]?["observers"] == 1
            && reply["error"]?["acknowledged"] == 0, "\(reply)")
        for socket in [a, b] {
            let got = try LineClient(path: socket).request(#"{"op":"get","object":"o","keyPath":"k"}"#).reply
            #expect(got["value"] == 1, "the change stays applied: \(got)")
        }
    }
}
