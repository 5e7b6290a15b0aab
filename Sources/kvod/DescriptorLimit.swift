#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit (RLIMIT_NOFILE), which bounds how many
/// clients kvod can hold.
enum DescriptorLimit {
    /// Descriptors kept for everything that is not a client: the listening
    /// socket, the loop's epoll and signal pipes, libuv's and the server's
    /// spare descriptors for EMFILE, standard streams, the policy file.
    static let reserved = 32

    /// Raises the soft limit to the hard one, as systemd suggests for daemons
    /// that never use select(2); returns the soft limit in force afterwards.
    @discardableResult
    static func raiseSoftToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones, which Swift cannot import as an rlim_t.
        return limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
    }

    /// The default for `--max-connections`: what the limit leaves for clients.
    static func defaultMaxConnections(softLimit: Int) -> Int {
        max(1, softLimit - reserved)
    }
}
