import Foundation
import Glibc
import KVOValues

/// What a member says of itself through its JSON gateway (`/v3/maintenance/status`).
public struct EtcdMemberStatus: Sendable {
    /// This member's id.
    public var member: UInt64
    /// The leader it knows (0: none).
    public var leader: UInt64
    public var raftTerm: UInt64
}

extension EtcdCluster {
    /// Member `index`'s status, asked over a plain socket (no `etcdctl`
    /// process: a few milliseconds, so a test can poll for a leader closely);
    /// nil when it does not answer within `timeout` seconds.
    public func status(of index: Int, timeout: Double = 1) -> EtcdMemberStatus? {
        guard let answer = try? EtcdGatewayCall.post("/v3/maintenance/status", body: "{}", to: members[index].clientURL,
                                                     timeout: timeout),
              let json = try? JSONReader.parse(Array(answer.utf8)) else { return nil }
        func id(_ value: JSONValue?) -> UInt64 { value?.stringValue.flatMap { UInt64($0) } ?? 0 }
        return EtcdMemberStatus(member: id(json["header"]?["member_id"]), leader: id(json["leader"]),
                                raftTerm: id(json["raftTerm"]))
    }
}

/// A watch that requires a leader (`Grpc-Metadata-hasleader: true`, as
/// kvod's), held by a thread of its own on one member: etcd ends it once the
/// member has had no leader for three election timeouts (its `monitorLeader`),
/// so ``endedAt`` is when etcd itself says the member is leaderless.
///
/// @unchecked Sendable: `created` and `ended` are only touched with `lock` held.
public final class LeaderRequiringWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var created = false
    private var ended: Date?

    /// Starts watching `key` on the member at `clientURL` (`http://127.0.0.1:<port>`) for at most `lifetime` seconds.
    public init(on clientURL: String, key: String = "/leader-requiring-watch", lifetime: Double = 60) {
        let body = #"{"create_request":{"key":"\#(Data(key.utf8).base64EncodedString())"}}"#
        Thread.detachNewThread { [self] in
            _ = try? EtcdGatewayCall.post("/v3/watch", body: body, to: clientURL, timeout: lifetime,
                                          headers: ["Grpc-Metadata-hasleader: true"]) { [self] received in
                guard received.contains(#""created":true"#) else { return }
                lock.withLock { created = true }
                WaitSignal.shared.notify()
            }
            lock.withLock { ended = Date() }
            WaitSignal.shared.notify()
        }
    }

    /// Whether etcd said the watch is in place.
    public var isCreated: Bool { lock.withLock { created } }
    /// When the stream ended (nil: it goes on).
    public var endedAt: Date? { lock.withLock { ended } }
}

/// One HTTP/1.1 POST to an etcd member's gateway on a blocking socket.
enum EtcdGatewayCall {
    /// The body of the answer, read until the member closes the connection
    /// (`Connection: close`) or `timeout` seconds pass; `received` is told
    /// what came so far each time more comes.
    static func post(_ path: String, body: String, to clientURL: String, timeout: Double,
                     headers: [String] = [], received onReceived: (String) -> Void = { _ in }) throws -> String {
        guard let port = clientURL.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            throw TestFailure("not a client URL: \(clientURL)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw TestFailure("cannot connect to \(clientURL): errno \(errno)") }
        let request = (["POST \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Content-Type: application/json",
                        "Content-Length: \(body.utf8.count)", "Connection: close"] + headers)
            .joined(separator: "\r\n") + "\r\n\r\n" + body
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw TestFailure("cannot send to \(clientURL): errno \(errno)")
        }
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[..<count]
            onReceived(String(decoding: received, as: UTF8.self))
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let bodyStart = text.range(of: "\r\n\r\n") else { throw TestFailure("no answer from \(clientURL)") }
        let answer = String(text[bodyStart.upperBound...])
        // A streamed answer comes chunked: its chunks' sizes are lines of their own, between the JSON objects.
        return answer.split(separator: "\r\n").filter { $0.first == "{" }.joined(separator: "\n")
    }
}
