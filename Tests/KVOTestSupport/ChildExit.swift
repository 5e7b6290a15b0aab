import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child's exit as the kernel holds it, read without reaping the child
/// (`waitid` with `WNOWAIT`: Foundation still reaps it and keeps its own
/// record). Foundation learns of an exit on a monitor thread of its own,
/// which in a parallel test run was seen to report a child that had finished
/// only after 20 s; the kernel's record is there at once.
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

    /// The exit status of `process`, once it has exited: Foundation's, or the
    /// kernel's while Foundation has not caught up (where its own would trap).
    public static func status(of process: Process) -> Int32? {
        if !process.isRunning { return process.terminationStatus }
        if let status = status(of: process.processIdentifier) { return status }
        // Foundation may have reaped it between the two looks (waitid then fails).
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Waits until `process` has exited, at most `timeout` seconds; returns its
    /// status. Not `Process.waitUntilExit`, which waits for Foundation's
    /// notice: a parallel run left children unreaped for 14 minutes, and a
    /// test process hung in it.
    @discardableResult
    @available(*, noasync, message: "blocks a cooperative thread")
    public static func wait(for process: Process, timeout: Double = 10) throws -> Int32 {
        var status: Int32?
        try waitUntil("pid \(process.processIdentifier) exits", timeout: timeout, recheckEvery: 0.01) {
            status = Self.status(of: process)
            return status != nil
        }
        return status ?? -1
    }

    /// SIGKILL, then waits for the exit (SIGKILL cannot be caught: at once).
    @available(*, noasync, message: "blocks a cooperative thread")
    public static func kill(_ process: Process) {
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
