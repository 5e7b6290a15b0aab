import Foundation
import KVOEngine
import KVOTestSupport
import Testing

/// Group commit across connections over etcd (docs/CLUSTER.md, "Pipelined
/// changes"): the changes of several connections that kvod reads in one loop
/// turn share `Txn`s, each connection's replies and events still in its own
/// order, each reply at the revision that applied its change.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"),
       .serialized)
struct ClusterGroupCommitTests {
    @Test func fourConnectionsChangesShareTxnsAndEachKeepsItsOrderOnEveryKvod() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let a = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let b = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        try Self.checkSharedTxns(writer: a.socketPath, observer: b.socketPath)
    }

    // MARK: Steps (blocking socket work, outside the async test bodies)

    /// Each round, each of four connections writes, at once, a set of its
    /// own object and an insert into one array all four share, then the test
    /// reads their replies. Without group commit each connection's changes of
    /// a round take a revision of their own (100 at least); with it, the
    /// connections read in one turn share one. Every reply is ok, in order;
    /// the array holds every insert once, each connection's in its order; the
    /// other kvod's observer is told each at its reply's seq, in the array's order.
    private static func checkSharedTxns(writer: String, observer: String) throws {
        try waitUntilFollowing([writer, observer])
        let (connections, rounds) = (4, 25)
        let watcher = try LineClient(path: observer)
        _ = try watcher.request(#"{"op":"observe","object":"shared","keyPath":"l","options":["new"]}"#)
        let setup = try LineClient(path: writer)
        #expect(try setup.request(#"{"op":"set","object":"shared","keyPath":"l","value":[]}"#).reply["ok"] == true)
        _ = try watcher.readJSON(timeout: 30)
        let clients = try (0..<connections).map { _ in try LineClient(path: writer) }
        var insertSeqs: [String: Int] = [:]
        var revisions: Set<Int> = []
        for round in 0..<rounds {
            for (index, client) in clients.enumerated() {
                try client.write(Array("""
                    {"id":"s\(round)","op":"set","object":"g\(index)","keyPath":"n","value":\(round)}
                    {"id":"i\(round)","op":"insert","object":"shared","keyPath":"l","value":"\(index)-\(round)"}

                    """.utf8))
            }
            for (index, client) in clients.enumerated() {
                let set = try client.readJSON(timeout: 30)
                let insert = try client.readJSON(timeout: 30)
                #expect(set["id"] == .string("s\(round)") && set["ok"] == true, "\(set)")
                #expect(insert["id"] == .string("i\(round)") && insert["ok"] == true, "\(insert)")
                let (setSeq, insertSeq) = (set["seq"]?.intValue ?? -1, insert["seq"]?.intValue ?? -1)
                #expect(setSeq <= insertSeq, "a connection's replies in its order: \(set) \(insert)")
                insertSeqs["\(index)-\(round)"] = insertSeq
                revisions.formUnion([setSeq, insertSeq])
            }
        }
        #expect(revisions.count < connections * rounds,
                "several connections' changes share a revision: \(revisions.count) for \(connections * rounds) reads")
        let reader = try LineClient(path: observer)
        let array = try reader.request(#"{"op":"get","object":"shared","keyPath":"l"}"#).reply["value"]
        let values = array?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(Set(values).count == connections * rounds && values.count == connections * rounds, "each once: \(values)")
        for index in 0..<connections {
            let own = values.filter { $0.hasPrefix("\(index)-") }
            #expect(own == (0..<rounds).map { "\(index)-\($0)" }, "connection \(index)'s inserts in its order: \(own)")
        }
        for value in values {
            let event = try watcher.readJSON(timeout: 30)
            #expect(event["new"] == [.string(value)] && event["seq"]?.intValue == insertSeqs[value], "\(value): \(event)")
        }
    }
}
