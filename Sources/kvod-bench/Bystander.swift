#if canImport(Glibc)
import Glibc
#endif
import KVOProtocol

/// A client that only pings, one request at a time, while a load runs: how
/// long an unrelated client waits for its reply. With durability that is
/// what a commit in progress costs everyone else (kvod holds every reply
/// while changes are uncommitted; docs/DURABILITY.md).
///
/// Blocking calls on its own thread: there is one request in flight, and a
/// read timeout turns a server that stopped answering into a problem.
final class Bystander {
    private let fd: Int32
    private let request: [UInt8]
    /// How a good reply starts.
    private let expected: [UInt8]
    /// Send-to-reply times, in nanoseconds, recorded while the load records.
    let latencies = Histogram()
    private(set) var problem: String?

    init(path: String, peer: Peer) throws(BenchError) {
        fd = try UnixSocket.connect(path)
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        switch peer {
        case .kvod:
            request = RequestEncoder(op: .ping).line
            expected = Array(("{" + LineFragment.okTrue.description).utf8)
        case .redis:
            request = Array("*1\r\n$4\r\nPING\r\n".utf8)
            expected = Array("+PONG".utf8)
        case .etcd:
            throw BenchError("the bystander pings kvod or Redis, not etcd")
        }
    }

    deinit { close(fd) }

    /// Pings until the setters stop, 2 ms apart (a client that waits between
    /// requests, not one that adds load).
    func run(_ signals: LoadSignals) {
        var reply: [UInt8] = []
        while !signals.stopSetting.load(ordering: .relaxed) {
            let started = monotonicNanoseconds()
            do {
                try UnixSocket.exchange(fd, request, into: &reply) { sending, closed, code in
                    "bystander: " + (sending ? "send: \(UnixSocket.errorText(code))" : closed ? "the server closed the connection"
                        : code == EAGAIN ? "no reply to a ping within 20 s" : "read: \(UnixSocket.errorText(code))")
                }
            } catch {
                problem = error.description
                return
            }
            let elapsed = monotonicNanoseconds() - started
            guard reply.starts(with: expected) else {
                problem = "bystander: error reply: " + String(decoding: reply.prefix(300), as: UTF8.self)
                return
            }
            if signals.recording.load(ordering: .relaxed) { latencies.record(elapsed) }
            usleep(2_000)
        }
    }
}
