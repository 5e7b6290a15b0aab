import Foundation
import KVOTestSupport

/// Runs the real kvoctl binary. Async tests get the async forms, which
/// suspend instead of blocking a thread of the cooperative pool.
enum KVOCtl {
    static var binaryURL: URL { KVODProcess.productsDirectory.appendingPathComponent("kvoctl") }

    /// `kvoctl ARGUMENTS --socket <kvod's socket>`.
    @available(*, noasync, message: "blocks a cooperative thread; use try await KVOCtl.run(…)")
    static func run(_ kvod: KVODProcess, _ arguments: [String], stdin: String? = nil) throws -> CommandRun {
        try CommandRun.run(binaryURL, arguments + ["--socket", kvod.socketPath], stdin: stdin)
    }

    /// `kvoctl ARGUMENTS --socket <kvod's socket>`, suspending while it runs.
    static func run(_ kvod: KVODProcess, _ arguments: [String], stdin: String? = nil) async throws -> CommandRun {
        try await CommandRun.run(binaryURL, arguments + ["--socket", kvod.socketPath], stdin: stdin)
    }

    /// `kvoctl ARGUMENTS` with `environment` (for `$KVOD_SOCKET` and friends).
    @available(*, noasync, message: "blocks a cooperative thread")
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil)
        throws -> CommandRun
    {
        try CommandRun.run(binaryURL, arguments, environment: environment, stdin: stdin)
    }

    /// `kvoctl ARGUMENTS` with `environment`, suspending while it runs.
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) async throws
        -> CommandRun
    {
        try await CommandRun.run(binaryURL, arguments, environment: environment, stdin: stdin)
    }
}
