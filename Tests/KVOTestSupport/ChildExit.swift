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
        return status(of: process.processIdentifier)
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
