import KVOEngine
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
    /// How long SIGTERM waits for queued output to leave before closing anyway.
    var shutdownGraceMilliseconds: UInt64 = 2_000
    /// How much output may wait for one client (see ``OutputLimits``).
    var outputLimits = OutputLimits()
    /// The most clients served at once; more are refused with `limit_exceeded`.
    /// nil: what the open-file limit leaves (``DescriptorLimit``).
    var maxConnections: Int?
    /// Who may read and write what (`--policy`); nil: everyone may everything.
    var accessPolicy: AccessPolicy?
}
