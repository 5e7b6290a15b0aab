#if canImport(Glibc)
import Glibc
#endif
import KVOProtocol

/// kvod's `info` counters that say whether it coalesced a slow reader's
/// events (docs/PROTOCOL.md, "Slow readers"), read on a connection of their own.
struct KvodInfo: Sendable {
    var eventsSent: Int
    var eventsCoalesced: Int
    var coalescingConnections: Int

    /// Asks the kvod listening on `path`; waits at most 10 s for the reply.
    static func read(_ path: String) throws(BenchError) -> KvodInfo {
        let fd = try UnixSocket.connect(path)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var reply: [UInt8] = []
        try UnixSocket.exchange(fd, RequestEncoder(op: .info).line, into: &reply) { sending, _, code in
            "info: \(sending ? "send" : "no reply"): \(UnixSocket.errorText(code))"
        }
        let text = String(decoding: reply, as: UTF8.self)
        func counter(_ name: String) -> Int {
            guard let range = text.range(of: "\"\(name)\":") else { return -1 }
            return Int(text[range.upperBound...].prefix { $0.isNumber }) ?? -1
        }
        return KvodInfo(eventsSent: counter("eventsSent"), eventsCoalesced: counter("eventsCoalesced"),
                        coalescingConnections: counter("coalescingConnections"))
    }
}
