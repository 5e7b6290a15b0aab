import ArgumentParser
import KVOClient

/// kvoctl's exit statuses, which scripts branch on (docs/CLIENT.md lists them).
enum ExitStatus {
    /// The daemon refused the request for a reason with no status of its own
    /// (`not_an_object`, `index_out_of_range`, `limit_exceeded`, …); for `raw`, any error reply.
    static let daemonError = ExitCode(1)
    /// The command line is wrong, or names a file kvoctl cannot read or write.
    static let usage = ExitCode(2)
    /// No daemon at the socket, or the connection was lost.
    static let cannotConnect = ExitCode(3)
    /// `observe --count N --timeout S`: fewer than N events within S seconds.
    static let timedOut = ExitCode(4)
    /// An `--if-mod-seq` or `--if-value` condition did not hold: nothing changed.
    static let preconditionFailed = ExitCode(5)
    /// `observe --since` or `--resume-file`: kvod no longer holds the changes
    /// after that point, or the point is of another epoch (`compacted`).
    static let compacted = ExitCode(6)
    /// `--await`: not every observer was written to or acknowledged the
    /// change within `--timeout` (kvod's `timeout`); the change is applied.
    static let awaitTimedOut = ExitCode(7)
    /// No value at that object or key path (`not_found`).
    static let notFound = ExitCode(8)
    /// The access policy does not let this client do that (`forbidden`).
    static let forbidden = ExitCode(9)
    /// kvod could not take the request as sent (`bad_request`, `bad_json`, `unknown_op`).
    static let badRequest = ExitCode(10)
    /// kvod over etcd cannot reach it, or lost the race for the object; nothing changed (`unavailable`).
    static let unavailable = ExitCode(11)
    /// kvod did not answer within `--request-timeout` (KVOClient's `timed_out`); the
    /// request may or may not have been applied. (Until 0.2 this was 3.)
    static let noReply = ExitCode(12)
    /// kvod's disk is full: the write would add data and was refused; nothing changed (`storage_full`).
    static let storageFull = ExitCode(13)

    /// The failure `error` calls for: its status, and the daemon's (or the client's) code and message.
    static func failure(_ error: KVOClientError) -> CommandFailure {
        let status = switch error.code {
        case .preconditionFailed: preconditionFailed
        case .compacted: compacted
        case .timeout: awaitTimedOut
        case .notFound: notFound
        case .forbidden: forbidden
        case .badRequest, .badJSON, .unknownOp: badRequest
        case .unavailable: unavailable
        case .timedOut: noReply
        case .storageFull: storageFull
        case _ where error.isConnectionError || error.code == .protocolViolation: cannotConnect
        default: daemonError
        }
        return CommandFailure(status, "\(error.code): \(error.message)")
    }
}

/// What ends kvoctl with a non-zero status: the status and the one line on
/// standard error that says why (`kvoctl: REASON`), which `--quiet` leaves
/// out except for usage errors (those are the script's own mistakes).
struct CommandFailure: Error {
    let status: ExitCode
    let reason: String

    init(_ status: ExitCode, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    static func usage(_ reason: String) -> CommandFailure { CommandFailure(ExitStatus.usage, reason) }
}
