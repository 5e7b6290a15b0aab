import Foundation
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about a process: memory, descriptors, CPU time. For
/// assertions about kvod's resources from the outside.
struct ProcessStats {
    let pid: Int32

    /// Resident memory now (VmRSS), in bytes.
    func residentBytes() throws -> Int { try statusField("VmRSS") }

    /// The most resident memory the process ever had (VmHWM), in bytes.
    func peakResidentBytes() throws -> Int { try statusField("VmHWM") }

    /// How many descriptors the process has open.
    func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// User plus system CPU time consumed so far, in seconds.
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may contain spaces; fields after it are plain.
        guard let close = stat.lastIndex(of: ")") else { throw TestFailure("odd /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestFailure("odd /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private func statusField(_ name: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
            if let digits, let kilobytes = Int(digits.trimmingCharacters(in: .whitespaces)) { return kilobytes * 1024 }
        }
        throw TestFailure("no \(name) in /proc/\(pid)/status")
    }
}

/// This process's hard open-file limit, which the processes it starts inherit
/// (kvod and kvod-crowd raise their soft limit to it).
func hardOpenFilesLimit() -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return Int(clamping: limit.rlim_max)
}
