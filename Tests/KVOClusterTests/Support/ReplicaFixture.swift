import Foundation
import KVOCluster
import KVOEngine
import KVOValues
import KVOEtcd
import Logging

/// An engine over an ``EtcdReplica`` over a ``MemoryEtcd``, on a
/// ``ManualLoop``, wired as the daemon wires them (Daemon+Cluster), and
/// clients that send it request lines.
final class ReplicaFixture {
    let etcd = MemoryEtcd()
    let loop = ManualLoop()
    let engine = Engine()
    let keys = ClusterKeys(prefix: "/kvod/")
    let log = LogRecorder()
    private(set) var replica: EtcdReplica!
    private var clients: [ClientController] = []

    init() {
        // A loop turn: the changes pipelined so far proposed (as the daemon's turn does), etcd's answers told.
        loop.drain = { [etcd, engine] in
            repeat {
                engine.proposeQueuedPipelines()
                etcd.drain()
            } while etcd.hasAnswers
        }
        etcd.put(keys.epoch, "4b1c0c1e-0000-4000-8000-000000000001")
        let epoch = ClusterEpoch(uuid: etcd.value(keys.epoch) ?? "", clusterID: MemoryEtcd.clusterID, revision: etcd.revision)
        let snapshot = ReplicaSnapshot(read(ReplicaSnapshot.request(keys)), keys: keys)
        engine.loadReplica(documents: snapshot.documents, revision: UInt64(snapshot.revision), epoch: epoch.text,
                           modSeqs: snapshot.modSeqs)
        let log = log
        replica = EtcdReplica(backend: etcd, keys: keys, snapshot: snapshot, epoch: epoch, engine: engine, leaseTTL: 30,
                              loop: loop, logger: Logger(label: "replica") { _ in log })
        engine.replicator = replica
        engine.pipelinesChanges = true
        replica.restoreLeases(snapshot, engine: engine, keys: keys)
        replica.start()
        replica.startLivenessChecks()
        loop.settle()
    }

    deinit {
        for client in clients { engine.closeClient(client) }
        replica.close()
        // The daemon closes its etcd client after the replica (Daemon.closeCluster).
        etcd.close()
        engine.replicator = nil
    }

    /// A range read answered now.
    func read(_ request: EtcdRangeRequest) -> EtcdRangeResponse {
        var response: EtcdRangeResponse?
        etcd.range(request) { response = try? $0.get() }
        etcd.drain()
        return response!
    }

    func makeClient() -> ClientController {
        let client = engine.makeClient()
        clients.append(client)
        return client
    }

    /// Closes `client` as its connection's end does (ClientConnection): the engine, then its lease.
    func close(_ client: ClientController) {
        engine.closeClient(client)
        clients.removeAll { $0 === client }
        replica.clientClosed(client.id)
        loop.settle()
    }

    /// Sends `line` from `client`, then runs the loop's turn: answers and fires what is due now.
    func send(_ line: String, from client: ClientController) {
        Array(line.utf8).withUnsafeBytes { engine.handle(line: $0, from: client) }
        // What the daemon does once a read's lines are handled (ClientConnection).
        _ = engine.queuePipelinedChanges(of: client)
        loop.settle()
    }

    /// The replies `client` got since last asked (events left out).
    func replies(to client: ClientController) -> [JSONObject] {
        var bytes: [UInt8] = []
        client.takeOutput(into: &bytes)
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard case .object(let members)? = try? JSONReader.parse(line), members["id"] != nil else { return nil }
            return members
        }
    }

    /// The value at `keyPath` of `object` as a `get` answers it here; nil when there is none.
    func value(_ object: String, _ keyPath: String) -> JSONValue? {
        let reader = makeClient()
        send(#"{"op":"get","id":1,"object":"\#(object)","keyPath":"\#(keyPath)"}"#, from: reader)
        return replies(to: reader).first?["value"]
    }

    /// Whether the engine holds `object` at all.
    func holds(_ object: String) -> Bool {
        let reader = makeClient()
        send(#"{"op":"get","id":1,"object":"\#(object)"}"#, from: reader)
        return replies(to: reader).first?["ok"] == .bool(true)
    }

    /// Puts `document` (a JSON object's text) as `object`'s document, as a writer without kvod would.
    func writeElsewhere(_ object: String, _ document: String) {
        etcd.put(keys.document(object), document)
    }
}

/// The replica's log lines, kept for the tests to read.
final class LogRecorder: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { lines.append("\(event.message)") }
    }

    /// Whether a line so far holds `text`.
    func contains(_ text: String) -> Bool {
        lock.withLock { lines.contains { $0.contains(text) } }
    }
}

extension JSONValue {
    /// An integer as a reply holds it.
    static func int(_ value: some BinaryInteger) -> JSONValue { .number(JSONNumber(validatedLiteral: String(value))) }
}
