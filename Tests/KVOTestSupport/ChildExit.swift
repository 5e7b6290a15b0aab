import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child's exit as the kernel holds it, read without reaping the child
/// (`waitid` with `WNOWAIT`: ``ChildProcess`` reaps it when it goes away).
/// The kernel's record is there at once; Foundation's own notice of an exit
/// came 20 s late, or never, in parallel test runs.
public enum ChildExit {
    /// The exit status of child `pid` if it has exited: its code, or 128 +
    /// the signal that ended it; nil while it runs.
    public static func status(of pid: pid_t) -> Int32? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info.si_signo == SIGCHLD else {
            return nil
        }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? status : 128 + status
    }

    /// The exit status of `process`, once it has exited.
    public static func status(of process: ChildProcess) -> Int32? { process.exitStatus }

    /// Waits until `process` has exited, at most `timeout` seconds; returns its
    /// status.
    @discardableResult
    @available(*, noasync, message: "blocks a cooperative thread")
    public static func wait(for process: ChildProcess, timeout: Double = 10) throws -> Int32 {
        var status: Int32?
        try waitUntil("pid \(process.processIdentifier) exits", timeout: timeout, recheckEvery: 0.01) {
            status = Self.status(of: process)
            return status != nil
        }
        return status ?? -1
    }

    /// SIGKILL, then waits for the exit (SIGKILL cannot be caught: at once).
    @available(*, noasync, message: "blocks a cooperative thread")
    public static func kill(_ process: ChildProcess) {
        guard status(of: process) == nil else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = try? wait(for: process)
    }

    /// What /proc says of a child that has not exited in time: its state and
    /// where in the kernel it waits, for the failure's message.
    public static func describe(_ pid: pid_t) -> String {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "gone"
        let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
        let wchan = (try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "?"
        return "pid \(pid) state \(state), waiting in \(wchan)"
    }
}
