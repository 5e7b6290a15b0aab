#if canImport(Glibc)
import Glibc
#endif

/// The CPU time a process has used so far (user + system, from
/// `/proc/<pid>/stat`), to tell what each change costs each server.
enum ProcessCPU {
    static func seconds(_ pid: Int32) -> Double {
        guard pid > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
