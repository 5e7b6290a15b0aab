import Foundation
import KVOTestSupport

/// Runs the real kvoctl binary.
enum KVOCtl {
    static var binaryURL: URL { KVODProcess.productsDirectory.appendingPathComponent("kvoctl") }

    /// `kvoctl ARGUMENTS --socket <kvod's socket>`.
    static func run(_ kvod: KVODProcess, _ arguments: [String], stdin: String? = nil) throws -> CommandRun {
        try CommandRun.run(binaryURL, arguments + ["--socket", kvod.socketPath], stdin: stdin)
    }

    /// `kvoctl ARGUMENTS` with `environment` (for `$KVOD_SOCKET` and friends).
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil)
        throws -> CommandRun
    {
        try CommandRun.run(binaryURL, arguments, environment: environment, stdin: stdin)
    }
}
