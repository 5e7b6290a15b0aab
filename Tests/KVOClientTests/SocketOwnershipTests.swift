import Foundation
import KVOClient
import KVOTestSupport
import KVOValues
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Before connecting to the default socket, a client checks that it and its
/// directory belong to whom they should (docs/SECURITY.md, "The socket's directory").
@Suite(.onDedicatedThread) struct SocketOwnershipTests {
    @Test func onlyTheDefaultPathIsChecked() {
        #expect(KVOConnection.Configuration(socketPath: "/chosen.sock").checksSocketOwnership == false)
        let chosen = DefaultSocketPath.isChosen(environment: ProcessInfo.processInfo.environment)
        #expect(KVOConnection.Configuration().checksSocketOwnership == !chosen)
    }

    static var nobody: uid_t { getpwnam("nobody")?.pointee.pw_uid ?? 65534 }

    /// kvod in a folder the test arranges like someone else could; the client checks as for a default path.
    @Test(.enabled(if: getuid() == 0, "changing owners needs root"), arguments: [
        ("directory of another user", "belongs to uid \(nobody), not to uid 0"),
        ("directory others may write in", "writable by its group or by others (mode 0777)"),
        ("socket of another user", "kvod.sock belongs to uid \(nobody), not to uid 0"),
    ])
    func checkedConnectionRefusesWhatAnotherUserCouldHaveMade(setup: String, complaint: String) async throws {
        let folder = try TemporaryDirectory()
        let socket = folder.path + "/kvod.sock"
        let kvod = try await KVODProcess(socketPath: socket)
        switch setup {
        case "directory of another user": chown(folder.path, Self.nobody, 0)
        case "directory others may write in": chmod(folder.path, 0o777)
        default: lchown(socket, Self.nobody, 0)
        }
        var configuration = KVOConnection.Configuration(socketPath: socket)
        configuration.checksSocketOwnership = true
        do {
            _ = try KVOConnection(configuration: configuration)
            Issue.record("connected to \(socket)")
        } catch {
            #expect(error.code == .cannotConnect)
            #expect(error.message.contains(complaint) && error.message.contains("KVOD_SOCKET"), "\(error.message)")
        }
        // Told which socket to trust, it connects.
        let told = try KVOConnection(configuration: KVOConnection.Configuration(socketPath: socket))
        try await told.ping()
        told.close()
        _ = try await kvod.terminate()
    }

    @Test func checkedConnectionToOwnSocketInOwnDirectoryConnects() async throws {
        let kvod = try await KVODProcess()
        var configuration = KVOConnection.Configuration(socketPath: kvod.socketPath)
        configuration.checksSocketOwnership = true
        let connection = try KVOConnection(configuration: configuration)
        try await connection.ping()
        connection.close()
    }
}
