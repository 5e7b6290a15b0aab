import Foundation
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// kvod (or kvoctl) run as `nobody` through `setpriv`, for what depends on
/// who kvod is: the default socket path (root's is `/run/kvod`, which a test
/// must not touch) and permissions (root passes every check). Needs root.
enum ForeignKVOD {
    static let user = "nobody"
    static let group = "nogroup"
    static var uid: uid_t { getpwnam(user)?.pointee.pw_uid ?? 65534 }
    static var gid: gid_t { getpwnam(user)?.pointee.pw_gid ?? 65534 }

    static func setprivArguments(_ executable: URL, _ arguments: [String]) -> [String] {
        ["--reuid=\(user)", "--regid=\(group)", "--clear-groups", executable.path] + arguments
    }

    /// Runs `executable` as nobody to its end (a kvod that refuses to start).
    static func run(_ arguments: [String], executable: URL = KVODProcess.binaryURL,
                    environment: [String: String] = [:]) throws -> CommandRun {
        try CommandRun.run(URL(fileURLWithPath: "/usr/bin/setpriv"), setprivArguments(executable, arguments),
                           environment: environment)
    }

    /// Starts kvod as nobody and returns it once `socketPath` accepts connections.
    static func start(_ arguments: [String], environment: [String: String], socketPath: String,
                      stderrPath: String) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = setprivArguments(KVODProcess.binaryURL, arguments)
        process.environment = KVODProcess.inheritedEnvironment.merging(environment) { _, new in new }
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try waitUntil("kvod as nobody accepts connections on \(socketPath)", timeout: 20) {
            if !process.isRunning {
                throw TestFailure("kvod exited early: \((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")")
            }
            return UnixSockets.canConnect(socketPath)
        }
        return process
    }

    /// A folder nobody may enter, and write in when `writable`.
    static func folder(writable: Bool) throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        chmod(folder.path, 0o755)
        if writable { chown(folder.path, uid, gid) }
        return folder
    }
}
