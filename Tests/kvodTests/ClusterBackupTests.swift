import Foundation
import KVOEngine
import KVOTestSupport
import KVOValues
import Testing

/// `backup` over etcd: etcd holds the state, and etcd backs it up.
@Suite(.onDedicatedThread, .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"))
struct ClusterBackupTests {
    @Test func aBackupOverEtcdIsRefusedNamingEtcdctlSnapshotSave() async throws {
        let cluster = try await EtcdCluster(size: 1)
        let kvod = try await KVODProcess(arguments: ["--etcd", cluster.clientURLs[0]])
        let reply = try Self.request(#"{"op":"backup","id":1}"#, kvod.socketPath)
        #expect(reply["error"]?["code"] == "bad_request", "\(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.contains("etcdctl snapshot save") == true, "\(reply)")
        let chunk = try Self.request(#"{"op":"backup","offset":0}"#, kvod.socketPath)
        #expect(chunk["error"]?["message"]?.stringValue?.contains("etcdctl snapshot save") == true, "\(chunk)")
    }

    private static func request(_ line: String, _ socket: String) throws -> JSONValue {
        try LineClient(path: socket).request(line).reply
    }
}
