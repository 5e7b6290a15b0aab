import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `kvod --etcd` when the etcd leader dies (docs/CLUSTER.md, "When etcd is out of reach").
extension ClusterDaemonTests {
    @Test func killingTheEtcdLeaderPausesWritesThenTheyGoOnLosingNoAcknowledgedWriteAndNoEvent() async throws {
        let cluster = try await EtcdCluster()
        let leader = try await cluster.leaderIndex()
        let others = cluster.clientURLs.indices.filter { $0 != leader }.map { cluster.clientURLs[$0] }
        // One kvod on the leader's member (the next member listed after it), one on each other member.
        var kvods: [KVODProcess] = []
        for endpoints in [[cluster.clientURLs[leader], others[0]], [others[0]], [others[1]]] {
            kvods.append(try await KVODProcess(arguments: ["--etcd", endpoints.joined(separator: ",")]))
        }
        let sockets = kvods.map(\.socketPath)
        let observers = try Self.observeWriters(sockets)
        let writers = ClusterWriters(sockets: sockets, count: 40)
        // Writers on one object race, so some go faster: the kill comes once every one has begun.
        try await waitUntil("every writer is acknowledged and one five times", timeout: 60, recheckEvery: 0.01) {
            () async -> Bool in
            let counts = writers.seqs.map(\.count)
            return (counts.allSatisfy { $0 >= 1 } && counts.contains { $0 >= 5 }) || !writers.errors.isEmpty
        }
        let beforeKill = writers.seqs.map(\.count)
        try await cluster.kill(member: leader)
        try await waitUntil("the writers are done", timeout: 120, recheckEvery: 0.05) { () async -> Bool in
            writers.isFinished
        }
        #expect(writers.errors.isEmpty, "\(writers.errors)")
        #expect(beforeKill.allSatisfy { $0 < writers.count },
                "writes went on after the kill: \(beforeKill) acknowledged before, \(writers.unavailableAnswers) unavailable")
        try Self.checkNothingLost(observers, sockets: sockets, writers: writers)
    }

    /// One observer per kvod, of the writers' key paths and `end`.
    private static func observeWriters(_ sockets: [String]) throws -> [LineClient] {
        try sockets.map { socket in
            let observer = try LineClient(path: socket)
            let reply = try observer.request(
                #"{"op":"observe","object":"o","keyPaths":["w0","w1","w2","end"],"options":["new"]}"#).reply
            #expect(reply["ok"] == true, "\(reply)")
            return observer
        }
    }

    /// Every acknowledged seq reached every observer; the streams are one
    /// stream, in seq order, none repeated; every kvod reads the last values.
    private static func checkNothingLost(_ observers: [LineClient], sockets: [String], writers: ClusterWriters) throws {
        let end = try LineClient(path: sockets[1]).request(#"{"op":"set","object":"o","keyPath":"end","value":true}"#,
                                                           timeout: 30).reply
        let endSeq = try #require(end["seq"]?.intValue, "\(end)")
        var streams: [[String]] = []
        for (index, observer) in observers.enumerated() {
            var events: [JSONValue] = []
            while events.last?["seq"]?.intValue != endSeq {
                events.append(try observer.readJSON(timeout: 60))
            }
            let seqs = events.compactMap { $0["seq"]?.intValue }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "kvod \(index): in order, none repeated")
            let acknowledged = Set(writers.seqs.joined())
            #expect(acknowledged.isSubset(of: Set(seqs)), "kvod \(index) missed \(acknowledged.subtracting(seqs).sorted())")
            streams.append(events.map { "\($0["seq"]!) \($0["keyPath"]!) \($0["new"] ?? .null)" })
            let document = try LineClient(path: sockets[index]).request(#"{"op":"get","object":"o"}"#).reply["value"]
            let last = JSONValue.number(JSONNumber(writers.count))
            #expect(["w0", "w1", "w2"].allSatisfy { document?[$0] == last } && document?["end"] == true,
                    "kvod \(index) reads the last acknowledged values: \(document ?? .null)")
        }
        #expect(streams[0] == streams[1] && streams[1] == streams[2], "one stream on every kvod")
    }
}
