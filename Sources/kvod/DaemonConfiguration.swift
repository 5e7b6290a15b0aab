import KVOStorage
import Logging

/// Everything the daemon needs to start, read from the command line and the
/// environment by ``KVODCommand``.
struct DaemonConfiguration: Sendable {
    /// Where to listen.
    var socketPath: String
    /// The socket file's permission bits (default 0660: owner and group).
    var socketMode: UInt32 = 0o660
    /// The longest request line accepted; longer ones get `too_large`.
    var maxLineBytes: Int = 1 << 20
    var logLevel: Logger.Level = .info
    /// Where state is kept (`--data-dir`); nil keeps it in memory only.
    var dataDirectory: String?
    /// When commits are synced to the disk (`--sync`).
    var syncMode: SyncMode = .always
    /// How many recent changes are kept for `observe` with `since` (`--history`).
    var historyCapacity: Int = 100_000
    /// How long SIGTERM waits for queued output to leave before closing anyway.
    var shutdownGraceMilliseconds: UInt64 = 2_000
}
