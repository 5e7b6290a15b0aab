import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// Exactly once when etcd's answer is lost (issue 35, item 1; docs/CLUSTER.md,
/// "When etcd's answer is lost"): kvod talks to etcd only through a
/// ``LossyProxy`` that resets the connection 300 ms after etcd answered the
/// first `Txn`, so etcd applied it and kvod cannot know from the answer.
/// Every change must be applied once, and each reply must tell the truth: ok
/// at the seq it was applied at, or an error and not applied.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterLostAnswerTests {
    @Test func eightPipelinedInsertsWhoseTxnAnswerIsLostAreEachAppliedOnce() async throws {
        try await Self.run(count: 8, losing: .answer)
    }

    @Test func aSingleInsertWhoseTxnAnswerIsLostIsAppliedOnceAndAnsweredOk() async throws {
        try await Self.run(count: 1, losing: .answer)
    }

    /// The watch delivers the revision only after the `Txn` was sent again:
    /// the resend loses its compare, and the id in the records tells that
    /// the first sending was applied.
    @Test func aTxnSentAgainBeforeTheWatchToldTheFirstWasAppliedIsNotAppliedTwice() async throws {
        try await Self.run(count: 8, losing: .answer, watchHold: 1.5,
                           resolvedBy: "a Txn sent again lost its compare to an earlier sending")
    }

    /// The request is lost, not the answer: kvod cannot tell, so it sends the
    /// same `Txn` again, which applies every insert once.
    @Test func eightPipelinedInsertsWhoseTxnIsLostOnTheWayAreAppliedOnceBySendingItAgain() async throws {
        try await Self.run(count: 8, losing: .request, resolvedBy: "sending it again")
    }

    /// kvod A on the proxy only, kvod B on etcd directly; `count` inserts
    /// through A with the proxy armed to lose the first `Txn`'s `loss`.
    private static func run(count: Int, losing loss: LossyProxy.Loss, watchHold: Double = 0,
                            resolvedBy resolution: String? = nil) async throws {
        let cluster = try await EtcdCluster(size: 1)
        let proxy = try LossyProxy(forwardingTo: cluster.clientURLs[0])
        defer { proxy.close() }
        let a = try await KVODProcess(arguments: ["--etcd", proxy.url])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let stored = try insertThroughLoss(proxy, loss, watchHold: watchHold, writer: a, observer: b.socketPath,
                                           count: count, resolution: resolution)
        try await checkEtcd(cluster, holds: stored)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Makes an empty array, arms the proxy, sends `count` inserts of
    /// distinct values at once and checks the replies, the array on both
    /// kvods and the other kvod's observer; returns the array.
    private static func insertThroughLoss(_ proxy: LossyProxy, _ loss: LossyProxy.Loss, watchHold: Double,
                                          writer kvod: KVODProcess, observer: String, count: Int,
                                          resolution: String?) throws -> JSONValue {
        try waitUntilFollowing([kvod.socketPath, observer])
        let client = try LineClient(path: kvod.socketPath)
        let made = try client.request(#"{"op":"set","object":"list","keyPath":"items","value":[]}"#, timeout: 30).reply
        #expect(made["ok"] == true, "\(made)")
        let watcher = try LineClient(path: observer)
        try waitUntil("the other kvod has the empty array", timeout: 20) {
            try watcher.request(#"{"op":"get","object":"list","keyPath":"items"}"#).reply["value"] == []
        }
        _ = try watcher.request(#"{"op":"observe","object":"list","keyPath":"items","options":["new"]}"#)

        proxy.arm(txns: 1, losing: loss, watchHold: watchHold)
        let lines = (0..<count).map { #"{"id":\#($0),"op":"insert","object":"list","keyPath":"items","value":\#($0)}"# }
        try client.write(Array(lines.map { $0 + "\n" }.joined().utf8))
        var acknowledged: [Int: Int] = [:]
        var failed: [Int] = []
        for index in 0..<count {
            let reply = try client.readJSON(timeout: 30)
            #expect(reply["id"]?.intValue == index, "replies in request order: \(reply)")
            if reply["ok"] == true, let seq = reply["seq"]?.intValue {
                acknowledged[index] = seq
            } else {
                #expect(reply["error"]?["code"] == "unavailable", "\(reply)")
                failed.append(index)
            }
        }
        #expect(proxy.droppedAnswers == 1, "the proxy lost a Txn's \(loss)")
        #expect(kvod.lastLogLine(containing: "etcd's answer to a Txn was lost") != nil, "\(kvod.stderrText())")
        if let resolution { #expect(kvod.lastLogLine(containing: resolution) != nil, "\(kvod.stderrText())") }

        // Every acknowledged insert reaches the other kvod's observer once, at its reply's seq.
        var heard: [Int: Int] = [:]
        while heard.count < acknowledged.count {
            let event = try watcher.readJSON(timeout: 30)
            guard case .array(let values)? = event["new"], let seq = event["seq"]?.intValue else { continue }
            for value in values {
                guard let value = value.intValue else { continue }
                #expect(heard.updateValue(seq, forKey: value) == nil, "\(value) inserted twice: \(event)")
            }
        }
        for (value, seq) in acknowledged {
            #expect(heard[value] == seq, "\(value) acknowledged at \(seq), applied at \(heard[value] ?? -1)")
        }

        // The array holds each acknowledged value once, none that failed, through either kvod.
        let expected = JSONValue.array(acknowledged.keys.sorted().map { JSONValue.number(JSONNumber($0)) })
        let arrayOnWriter = try client.request(#"{"op":"get","object":"list","keyPath":"items"}"#).reply["value"]
        #expect(arrayOnWriter == expected, "acknowledged \(acknowledged.keys.sorted()), failed \(failed)")
        let arrayOnObserver = try watcher.request(#"{"op":"get","object":"list","keyPath":"items"}"#).reply["value"]
        #expect(arrayOnObserver == expected, "acknowledged \(acknowledged.keys.sorted()), failed \(failed)")
        #expect(acknowledged.count == count, "etcd is reachable again at once: every insert is ok; failed \(failed)")
        return expected
    }

    /// etcd's own copy of the document holds `items` as the kvods do.
    private static func checkEtcd(_ cluster: EtcdCluster, holds items: JSONValue) async throws {
        let stored = try await cluster.stored("list").document ?? ""
        let document = try JSONReader.parse(Array(stored.utf8))
        #expect(document["items"] == items, "etcd holds \(document)")
    }
}
