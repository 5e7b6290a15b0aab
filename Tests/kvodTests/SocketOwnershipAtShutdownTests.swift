import Foundation
import KVOTestSupport
import Testing

/// At shutdown kvod removes the socket file it bound, and nothing else.
@Suite struct SocketOwnershipAtShutdownTests {
    @Test func stopRemovesItsOwnSocketFile() throws {
        let kvod = try KVODProcess()
        #expect(UnixSockets.fileInode(kvod.socketPath) != nil)
        try kvod.terminate()
        #expect(!FileManager.default.fileExists(atPath: kvod.socketPath))
    }

    @Test func stopLeavesASocketAnotherKvodBoundAtThePathSince() throws {
        let first = try KVODProcess()
        let path = first.socketPath
        // Someone removes the first kvod's socket file, and a second kvod binds the path.
        #expect(unlink(path) == 0)
        let second = try KVODProcess(socketPath: path)
        let inode = UnixSockets.fileInode(path)
        try first.terminate()
        #expect(UnixSockets.fileInode(path) == inode)
        #expect(try LineClient(path: path).request(#"{"op":"ping"}"#).reply["ok"] == true)
        try second.terminate()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
