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
        let request = RequestEncoder(op: .info).line
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw BenchError("info: send: \(UnixSocket.errorText())")
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(10) {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw BenchError("info: no reply: \(UnixSocket.errorText())") }
            reply += chunk[..<n]
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
