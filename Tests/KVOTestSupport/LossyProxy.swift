import Foundation
import Glibc

/// A TCP proxy on 127.0.0.1 in front of one etcd member's client URL that can
/// lose etcd's answer to a `Txn` (issue 35): while armed, a connection whose
/// next request is `POST /v3/kv/txn` forwards it to etcd, holds back etcd's
/// answer, and resets the client's side a while after that answer arrived,
/// so the client sees a transport failure after etcd applied the `Txn`
/// (``Loss/answer``); or resets it without forwarding the request, after
/// the first line of an answer of its own (``Loss/request``: the same
/// failure, nothing applied). Armed with a
/// `watchHold`, it also holds back what watches receive for that long after
/// the loss, so the client cannot learn the outcome from its watch at once.
/// Everything else (other requests, the watch's stream) is relayed as it is.
///
/// Plain POSIX sockets, a thread to accept and one per connection, each
/// bounded by `lifetime`; ``close()`` ends them all within a poll interval.
///
/// @unchecked Sendable: `armed`, `dropped`, `watchesHeldUntil`, `isClosed` and
/// `sockets` are only touched with `lock` held; the rest is set in `init`.
public final class LossyProxy: @unchecked Sendable {
    /// The URL to give the client instead of etcd's, `http://127.0.0.1:<port>`.
    public let url: String
    private let upstreamPort: UInt16
    private let listener: Int32
    private let deadline: Date
    /// How long after etcd's answer began to arrive the client's side is reset.
    private let resetAfter: Double
    private let lock = NSLock()
    private var armed: [(loss: Loss, watchHold: Double)] = []
    private var dropped = 0
    /// Until when watches' streams are held back.
    private var watchesHeldUntil = Date.distantPast
    private var isClosed = false
    private var sockets: Set<Int32> = []
    /// How often each thread looks at the clock and at `isClosed`.
    private static let pollMilliseconds: Int32 = 20

    /// Listens on a free port of 127.0.0.1 and forwards each connection to
    /// `target` (`http://127.0.0.1:<port>`); stops by itself after `lifetime` seconds.
    public init(forwardingTo target: String, resetAfter: Double = 0.3, lifetime: Double = 120) throws {
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0) }), target.hasPrefix("http://127.0.0.1:")
        else { throw TestFailure("the proxy forwards to http://127.0.0.1:<port> only, not \(target)") }
        upstreamPort = port
        self.resetAfter = resetAfter
        deadline = Date().addingTimeInterval(lifetime)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        } && listen(fd, 64) == 0
        guard listening else {
            Glibc.close(fd)
            throw TestFailure("the proxy cannot listen on 127.0.0.1: errno \(errno)")
        }
        listener = fd
        url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let thread = Thread { [self] in acceptConnections() }
        thread.name = "KVOTestSupport.LossyProxy"
        thread.start()
    }

    deinit { close() }

    /// What an armed proxy loses of a `Txn`.
    public enum Loss: Sendable {
        /// etcd's answer: the `Txn` is applied, the client does not hear so.
        case answer
        /// The request itself: nothing is applied, the client cannot tell.
        case request
    }

    /// Loses `loss` of each of the next `count` `Txn`s, and holds back
    /// watches' streams for `watchHold` seconds after each loss.
    public func arm(txns count: Int = 1, losing loss: Loss = .answer, watchHold: Double = 0) {
        lock.withLock { armed += Array(repeating: (loss, watchHold), count: count) }
    }

    /// How many `Txn`s lost their answer or themselves so far.
    public var droppedAnswers: Int { lock.withLock { dropped } }

    /// Stops accepting and ends every connection (their threads within a poll interval).
    public func close() {
        lock.withLock {
            guard !isClosed else { return }
            isClosed = true
            for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private var isOver: Bool { lock.withLock { isClosed } || Date() > deadline }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    /// Waits until `fd` is readable or a poll interval passed.
    private static func readable(_ fds: [Int32]) -> [Bool] {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&polled, nfds_t(polled.count), pollMilliseconds) > 0 else { return fds.map { _ in false } }
        return polled.map { $0.revents != 0 }
    }

    private func acceptConnections() {
        defer { Glibc.close(listener) }
        while !isOver {
            guard Self.readable([listener])[0] else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let thread = Thread { [self] in relay(client) }
            thread.name = "KVOTestSupport.LossyProxy.connection"
            thread.start()
        }
    }

    private func track(_ fd: Int32) -> Bool {
        lock.withLock {
            guard !isClosed else { return false }
            sockets.insert(fd)
            return true
        }
    }

    private func untrack(_ fd: Int32) { _ = lock.withLock { sockets.remove(fd) } }

    /// Relays one connection until either side closes it, or resets it after
    /// an armed `Txn`'s answer.
    private func relay(_ client: Int32) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer {
            untrack(client)
            untrack(upstream)
            Glibc.close(client)
            if upstream >= 0 { Glibc.close(upstream) }
        }
        guard upstream >= 0, track(client), track(upstream) else { return }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return }
        var requests = RequestScanner()
        /// When an armed `Txn` was forwarded: its answer is held back.
        var losing = false
        /// Whether the connection is a watch's.
        var watching = false
        /// When the held-back answer began to arrive.
        var answered: Date?
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !isOver {
            if let answered, Date().timeIntervalSince(answered) >= resetAfter {
                // A reset, not a FIN: SO_LINGER with a zero timeout.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return
            }
            let held = watching && lock.withLock { Date() < watchesHeldUntil }
            let ready = Self.readable(held ? [client] : [client, upstream]) + [false]
            if ready[0] && !losing {
                let count = read(client, &buffer, buffer.count)
                guard count > 0 else { return }
                var lost: Loss?
                for path in requests.scan(buffer[..<count]) {
                    if path == "/v3/watch" { watching = true }
                    guard path == "/v3/kv/txn" else { continue }
                    lost = lock.withLock {
                        guard let (loss, watchHold) = armed.first else { return nil }
                        armed.removeFirst()
                        dropped += 1
                        watchesHeldUntil = Date().addingTimeInterval(watchHold)
                        return loss
                    }
                }
                if lost == .request {
                    // A first byte of an answer, so libcurl does not send the request again by itself on a
                    // fresh connection (it does when a reused one fails before any byte of the answer).
                    _ = Self.writeAll(client, Array("HTTP/1.1 200 OK\r\n".utf8)[...])
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                    return
                }
                losing = lost == .answer
                guard Self.writeAll(upstream, buffer[..<count]) else { return }
            }
            // A hold that began while this thread polled holds what the poll found.
            if ready[1] && !(watching && lock.withLock({ Date() < watchesHeldUntil })) {
                let count = read(upstream, &buffer, buffer.count)
                guard count > 0 else { return }
                if losing {
                    if answered == nil { answered = Date() }
                } else {
                    guard Self.writeAll(client, buffer[..<count]) else { return }
                }
            }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            rest = rest.dropFirst(count)
        }
        return true
    }
}

/// Finds the requests in an HTTP/1.1 client's bytes, as they come: each
/// request's path once its head is complete; the body skipped by its
/// `Content-Length` (libcurl's POSTs carry one). A body sent chunked ends the
/// scanning: the rest is relayed unread.
private struct RequestScanner {
    private var head: [UInt8] = []
    private var bodyLeft = 0
    private var gaveUp = false

    mutating func scan(_ bytes: ArraySlice<UInt8>) -> [String] {
        var paths: [String] = []
        var rest = bytes
        while !rest.isEmpty, !gaveUp {
            if bodyLeft > 0 {
                let taken = min(bodyLeft, rest.count)
                bodyLeft -= taken
                rest = rest.dropFirst(taken)
                continue
            }
            head.append(rest.removeFirst())
            guard head.count >= 4, head.suffix(4).elementsEqual([13, 10, 13, 10]) else { continue }
            let text = String(decoding: head, as: UTF8.self)
            head = []
            let lines = text.split(separator: "\r\n")
            if let requestLine = lines.first {
                let parts = requestLine.split(separator: " ")
                if parts.count >= 2 { paths.append(String(parts[1])) }
            }
            for line in lines.dropFirst() {
                let field = line.lowercased()
                if field.hasPrefix("content-length:") {
                    bodyLeft = Int(field.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                } else if field.hasPrefix("transfer-encoding:") {
                    gaveUp = true
                }
            }
        }
        return paths
    }
}
