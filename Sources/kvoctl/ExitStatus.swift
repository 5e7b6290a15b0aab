import ArgumentParser
import KVOClient

/// kvoctl's exit statuses, which scripts branch on.
enum ExitStatus {
    static let ok = ExitCode(0)
    /// The daemon refused the request (`not_found`, `bad_request`, …).
    static let daemonError = ExitCode(1)
    /// The command line is wrong.
    static let usage = ExitCode(2)
    /// No daemon at the socket, the connection was lost, or a request got
    /// no reply within KVOClient's request deadline (`timedOut`).
    static let cannotConnect = ExitCode(3)
    /// `observe --count N --timeout S`: fewer than N events within S seconds.
    static let timedOut = ExitCode(4)
    /// An `--if-mod-seq` or `--if-value` condition did not hold: nothing changed.
    static let preconditionFailed = ExitCode(5)

    /// Writes `error` to standard error and returns the status it calls for.
    static func report(_ error: KVOClientError) -> ExitCode {
        Output.error("kvoctl: \(error.code): \(error.message)")
        if error.code == .preconditionFailed { return preconditionFailed }
        return error.isConnectionError || error.code == .protocolViolation ? cannotConnect : daemonError
    }
}
