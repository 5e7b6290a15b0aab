/// Why the daemon could not start or had to stop, with the exit status to use.
struct DaemonError: Error, CustomStringConvertible {
    let description: String
    /// 1: could not start (bad socket path, cannot bind). 2: another kvod already serves the socket.
    let exitCode: Int32

    static func cannotListen(_ reason: String) -> DaemonError { DaemonError(description: reason, exitCode: 1) }
    /// The data directory cannot be opened or read.
    static func cannotOpenStorage(_ reason: String) -> DaemonError { DaemonError(description: reason, exitCode: 1) }
    /// `--http-tokens`: the file cannot be used.
    static func badTokens(_ reason: String) -> DaemonError { DaemonError(description: "--http-tokens: \(reason)", exitCode: 1) }
    /// `--etcd`: the cluster could not be read at start.
    static func cannotReachEtcd(_ reason: String) -> DaemonError { DaemonError(description: reason, exitCode: 1) }
    /// A commit failed while running: kvod stopped rather than acknowledge unrecorded changes.
    static func storageFailed(_ reason: String) -> DaemonError {
        DaemonError(description: "stopped after a failed commit: \(reason)", exitCode: 1)
    }
}
