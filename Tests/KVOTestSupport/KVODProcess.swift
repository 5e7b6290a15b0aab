import Foundation
import Glibc

/// The real `kvod` binary, started on a temporary socket for one test
/// (the pattern of Tests/kvodTests/Support/KVODProcess.swift).
public final class KVODProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this object.
    public let socketPath: String
    public let directory: String
    public let process = Process()
    /// kvod's stderr goes to a file, not a pipe: kvod logs every connection,
    /// and a pipe nobody drains fills at 64 KiB and would block kvod.
    private let stderrPath: String
    private let ownsDirectory: Bool

    /// The folder that holds the test bundle also holds the built executables.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public static var binaryURL: URL { productsDirectory.appendingPathComponent("kvod") }

    /// Starts kvod and waits until its socket accepts connections. With
    /// `socketPath`, kvod listens there (e.g. to restart on the same path)
    /// and the caller owns its folder.
    public init(arguments: [String] = [], socketPath: String? = nil) throws {
        if let socketPath {
            self.socketPath = socketPath
            directory = (socketPath as NSString).deletingLastPathComponent
            ownsDirectory = false
        } else {
            directory = try TemporaryDirectory.make()
            self.socketPath = directory + "/kvod.sock"
            ownsDirectory = true
        }
        stderrPath = NSTemporaryDirectory() + "kvod-stderr-\(UUID().uuidString).log"
        process.executableURL = Self.binaryURL
        process.arguments = ["--socket", self.socketPath] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "KVOD_SOCKET")
        process.environment = environment
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil),
              let stderrFile = FileHandle(forWritingAtPath: stderrPath) else {
            throw TestFailure("cannot create \(stderrPath)")
        }
        process.standardError = stderrFile
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try waitUntil("kvod accepts connections on \(self.socketPath)", timeout: 20) {
            if !process.isRunning { throw TestFailure("kvod exited early: \(stderrText())") }
            return Self.canConnect(self.socketPath)
        }
    }

    public var pid: Int32 { process.processIdentifier }

    /// Kills kvod with SIGKILL (no goodbye to its clients) and waits until it is gone.
    public func kill() throws {
        Glibc.kill(process.processIdentifier, SIGKILL)
        try waitUntil("kvod exits", timeout: 10) { !process.isRunning }
    }

    /// Everything kvod wrote to stderr so far.
    public func stderrText() -> String {
        String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
    }

    /// Whether something accepts connections at `path`.
    public static func canConnect(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    deinit {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
        try? FileManager.default.removeItem(atPath: stderrPath)
    }
}
