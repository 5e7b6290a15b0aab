import Foundation
import KVOEngine
import KVOTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Starting, stopping, and clients that go away badly.
@Suite struct LifecycleTests {
    @Test func sigtermRemovesSocketFileAndExitsZero() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        _ = try client.request(#"{"op":"observe","object":"o","keyPath":"k"}"#)
        #expect(FileManager.default.fileExists(atPath: kvod.socketPath))
        let status = try kvod.terminate()
        #expect(status == 0, "stderr: \(kvod.stderrText())")
        #expect(!FileManager.default.fileExists(atPath: kvod.socketPath))
        // The connected client was closed, not left hanging.
        #expect(try client.waitForEndOfStream(timeout: 5))
    }

    @Test func socketFileGetsTheRequestedMode() throws {
        let standard = try KVODProcess()
        let custom = try KVODProcess(arguments: ["--socket-mode", "0600"])
        let standardMode = try FileManager.default.attributesOfItem(atPath: standard.socketPath)[.posixPermissions] as? Int
        let customMode = try FileManager.default.attributesOfItem(atPath: custom.socketPath)[.posixPermissions] as? Int
        #expect(standardMode == 0o660)
        #expect(customMode == 0o600)
    }

    @Test func socketPathOf108BytesIsRefusedWithAMessage() throws {
        let path = "/tmp/" + String(repeating: "p", count: 103)
        #expect(path.utf8.count == 108)
        let run = try CommandRun.run(KVODProcess.binaryURL, ["--socket", path])
        #expect(run.status != 0)
        #expect(run.stderr.contains("107 bytes"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func staleSocketFileIsReplaced() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/stale.sock"
        // A socket file with nobody listening: bind one, then close it without unlinking.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(fd)
        #expect(!UnixSockets.canConnect(path))
        let kvod = try KVODProcess(socketPath: path)
        #expect(try LineClient(path: path).request(#"{"op":"ping"}"#).reply["ok"] == true)
        try kvod.terminate()
    }

    @Test func secondKvodOnALiveSocketExitsNonZeroWithMessage() throws {
        let first = try KVODProcess()
        let second = try CommandRun.run(KVODProcess.binaryURL, ["--socket", first.socketPath])
        #expect(second.status != 0)
        #expect(second.stderr.contains("already listening"), "\(second.stderr)")
        // The first one is untouched.
        #expect(try LineClient(path: first.socketPath).request(#"{"op":"ping"}"#).reply["ok"] == true)
    }

    @Test func clientDyingMidLineCostsNothingAfterItIsGone() throws {
        let kvod = try KVODProcess()
        let watcher = try LineClient(path: kvod.socketPath)
        do {
            let dying = try LineClient(path: kvod.socketPath)
            _ = try dying.request(#"{"op":"observe","object":"o","keyPaths":["a","b","c"]}"#)
            try dying.write(Array(#"{"op":"set","object":"o","keyPa"#.utf8))
        }
        // Its observations leave with it.
        try waitUntil("the dead client's observations are gone", timeout: 10) {
            let info = try watcher.request(#"{"op":"info"}"#).reply
            return info["observations"] == 0 && info["connections"] == 1
        }
        #expect(try watcher.request(#"{"op":"set","object":"o","keyPath":"a","value":1}"#).reply["ok"] == true)
    }

    @Test func clientThatHalfClosesStillGetsItsReplies() throws {
        let kvod = try KVODProcess()
        let client = try LineClient(path: kvod.socketPath)
        try client.send(#"{"op":"set","id":1,"object":"o","keyPath":"k","value":1}"#)
        try client.send(#"{"op":"get","id":2,"object":"o","keyPath":"k"}"#)
        client.shutdownWrite()
        #expect(try client.readJSON()["id"] == 1)
        #expect(try client.readJSON()["value"] == 1)
        #expect(try client.waitForEndOfStream())
    }

    @Test func sigpipeFromAClosedReaderDoesNotKillTheDaemon() throws {
        let kvod = try KVODProcess()
        let setter = try LineClient(path: kvod.socketPath)
        for _ in 0..<20 {
            let reader = try LineClient(path: kvod.socketPath)
            // Ask for a large reply, then vanish before reading it.
            try reader.send(#"{"op":"set","object":"big","keyPath":"v","value":"\#(String(repeating: "x", count: 200_000))"}"#)
            try reader.send(#"{"op":"get","object":"big"}"#)
        }
        #expect(try setter.request(#"{"op":"ping"}"#).reply["ok"] == true)
        #expect(kvod.process.isRunning)
    }
}
