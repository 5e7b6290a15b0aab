#if canImport(Glibc)
import Glibc
#endif

/// What went wrong talking to a server; the run stops with this message.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Plain POSIX Unix-socket calls: the load generator shares no code with the
/// daemon's libuv layer, so it measures kvod from the outside, as any client would.
enum UnixSocket {
    /// A connected, blocking stream socket.
    static func connect(_ path: String) throws(BenchError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return try connect(AF_UNIX, address, naming: path)
    }

    /// A connected, blocking stream socket of `family` to `address` (a
    /// `sockaddr_un` or `sockaddr_in`); an error names it as `name`.
    static func connect<Address>(_ family: Int32, _ address: Address, naming name: String) throws(BenchError) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket(): \(errorText())") }
        let result = withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard result == 0 else {
            let text = errorText()
            Glibc.close(fd)
            throw BenchError("connect(\(name)): \(text)")
        }
        return fd
    }

    static func canConnect(_ path: String) -> Bool {
        guard let fd = try? connect(path) else { return false }
        Glibc.close(fd)
        return true
    }

    /// Sends `request` on the blocking socket `fd`, then reads into `reply` (emptied first) until it holds
    /// a newline. On a failure, throws what `message` makes of it: whether the send failed, else whether the
    /// server closed the connection, and errno (EAGAIN: SO_RCVTIMEO ran out).
    static func exchange(_ fd: Int32, _ request: [UInt8], into reply: inout [UInt8],
                         _ message: (_ sending: Bool, _ closed: Bool, _ code: Int32) -> String) throws(BenchError) {
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw BenchError(message(true, false, errno)) }
        reply.removeAll(keepingCapacity: true)
        while !reply.contains(10) {
            let count = withUnsafeTemporaryAllocation(byteCount: 512, alignment: 1) { chunk in
                let count = read(fd, chunk.baseAddress, chunk.count)
                if count > 0 { reply.append(contentsOf: chunk[..<count]) }
                return count
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw BenchError(message(false, count == 0, errno)) }
        }
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Raises the open-file limit to its hard maximum: the memory scenario
    /// holds 10,000 connections, and the servers inherit the limit.
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}

/// The monotonic clock in nanoseconds, the unit every timestamp here uses.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Sleeps for `seconds` (fractions allowed).
func sleep(seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
