import Foundation
import KVOTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Stands in for systemd's end of the notify protocol: a datagram socket the
/// test binds and hands to kvod as `NOTIFY_SOCKET`, at a path or under an
/// abstract `@name`.
final class NotifySocket {
    /// One datagram: its `KEY=VALUE` lines and when it arrived.
    struct Message: CustomStringConvertible {
        let assignments: [String]
        let arrival: ContinuousClock.Instant
        func has(_ assignment: String) -> Bool { assignments.contains(assignment) }
        /// The value of `STATUS=`, if the datagram carries one.
        var status: String? { assignments.first { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) } }
        var description: String { assignments.joined(separator: "|") }
    }

    /// What kvod gets as `NOTIFY_SOCKET`.
    let address: String
    private let fd: Int32
    private let directory: String?
    /// Every datagram received so far, in order.
    private(set) var received: [Message] = []

    init(abstract: Bool = false) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket(AF_UNIX, SOCK_DGRAM) failed: errno \(errno)") }
        var bytes: [UInt8]
        if abstract {
            address = "@kvodtest-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            bytes = Array(address.utf8)
            bytes[0] = 0
            directory = nil
        } else {
            let made = try TemporaryDirectory.make()
            directory = made
            address = made + "/notify"
            bytes = Array(address.utf8)
        }
        var sockaddress = sockaddr_un()
        sockaddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sockaddress.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &sockaddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestFailure("bind(\(address)) failed: errno \(errno)") }
    }

    deinit {
        Glibc.close(fd)
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The next datagram, or a failure after `timeout` seconds.
    @discardableResult
    func next(timeout: Double) throws -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw TestFailure("no notify datagram within \(timeout)s; so far: \(received)")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(min(remaining, 1) * 1_000) + 1) <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw TestFailure("recv on the notify socket failed: errno \(errno)")
            }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            let message = Message(assignments: text.split(separator: "\n").map(String.init),
                                  arrival: ContinuousClock.now)
            received.append(message)
            return message
        }
    }

    /// Reads datagrams until one satisfies `condition`, which it returns.
    @discardableResult
    func waitFor(_ what: String, timeout: Double, _ condition: (Message) -> Bool) throws -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let message = try next(timeout: max(deadline.timeIntervalSinceNow, 0.001))
            if condition(message) { return message }
            if Date() > deadline { throw TestFailure("timed out waiting for \(what); got \(received)") }
        }
    }

    /// Reads datagrams until one carries `assignment` (e.g. `READY=1`).
    @discardableResult
    func waitFor(_ assignment: String, timeout: Double = 20) throws -> Message {
        try waitFor(assignment, timeout: timeout) { $0.has(assignment) }
    }
}
