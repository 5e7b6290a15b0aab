import Glibc

/// kvod's own process figures, read from /proc/self when metrics are scraped.
struct ProcessFigures {
    /// User and system CPU time, in clock ticks.
    var cpuTicks: Int
    var residentBytes: Int

    static let ticksPerSecond = max(sysconf(Int32(_SC_CLK_TCK)), 1)

    /// From /proc/self/stat: fields 14 and 15 (utime, stime) and 24 (rss, in
    /// pages), counted after the command name's closing parenthesis (the name
    /// may hold spaces).
    static func read() -> ProcessFigures? {
        guard let text = contents("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state, field 3 of stat(5).
        guard fields.count > 21, let utime = Int(fields[11]), let stime = Int(fields[12]),
              let pages = Int(fields[21]) else { return nil }
        return ProcessFigures(cpuTicks: utime + stime, residentBytes: pages * Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// The entries of /proc/self/fd, less the one reading it.
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
        }
        return max(count - 1, 0)
    }

    private static func contents(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
