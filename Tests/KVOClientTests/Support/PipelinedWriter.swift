import Foundation
import Glibc
import KVOTestSupport

/// One writer connection of the crash test: sets `object`.`keyPath` to 1, 2,
/// 3… with up to `window` sets in flight, on a raw socket, and keeps exact
/// books of what kvod acknowledged. When the socket breaks it waits at
/// ``gate`` (the test restarts kvod and checks it first), reconnects, and
/// goes on with the next value.
///
/// @unchecked Sendable: the books are guarded by `lock`; the socket and the
/// counters of the running connection belong to the writer's thread.
final class PipelinedWriter: @unchecked Sendable {
    struct Books: Sendable {
        /// The last value kvod acknowledged, and its seq.
        var lastAcknowledged = 0
        var lastAcknowledgedSeq: UInt64 = 0
        /// The highest value sent (acknowledged or not).
        var lastSent = 0
        /// Values in flight when a connection broke: applied or not, nobody knows.
        var unacknowledged: Set<Int> = []
        /// Whether the writer waits for the gate after a broken connection.
        var isDisconnected = false
        var isFinished = false
        var failure: String?
    }

    let object: String
    let keyPath: String
    let total: Int
    let window: Int
    let socketPath: String
    let gate: Gate
    private let lock = NSLock()
    private var books = Books()

    init(object: String, keyPath: String, total: Int, window: Int, socketPath: String, gate: Gate) {
        self.object = object
        self.keyPath = keyPath
        self.total = total
        self.window = window
        self.socketPath = socketPath
        self.gate = gate
    }

    var snapshot: Books { lock.withLock { books } }

    func start() {
        let thread = Thread { [self] in run() }
        thread.start()
    }

    private func update(_ body: (inout Books) -> Void) { lock.withLock { body(&books) } }

    private func run() {
        var next = 1
        var generation = gate.generation
        while true {
            guard let fd = connectSocket() else {
                update { $0.failure = "cannot connect to \(socketPath)" }
                return
            }
            update { $0.isDisconnected = false }
            var inFlight: [Int] = []
            let ended = serve(fd, next: &next, inFlight: &inFlight)
            close(fd)
            update { [inFlight] in $0.unacknowledged.formUnion(inFlight) }
            if ended { break }
            update { $0.isDisconnected = true }
            generation = gate.wait(after: generation)
        }
        update { $0.isFinished = true }
    }

    /// Sends and reads until every value is acknowledged (true) or the socket breaks (false).
    private func serve(_ fd: Int32, next: inout Int, inFlight: inout [Int]) -> Bool {
        var pending: [UInt8] = []
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            while inFlight.count < window && next <= total {
                pending += Array(#"{"op":"set","object":"\#(object)","keyPath":"\#(keyPath)","value":\#(next)}"#.utf8) + [10]
                inFlight.append(next)
                update { [next] in $0.lastSent = next }
                next += 1
            }
            if inFlight.isEmpty { return true }
            if !pending.isEmpty {
                let sent = pending.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent > 0 { pending.removeFirst(sent) } else if sent < 0 && errno != EAGAIN { return false }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, pending.isEmpty ? 1000 : 1) >= 0 else { return false }
            guard poller.revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && errno == EAGAIN { continue }
            guard count > 0 else { return false }
            received += buffer[..<count]
            while let newline = received.firstIndex(of: 10) {
                let line = String(decoding: received[..<newline], as: UTF8.self)
                received.removeSubrange(...newline)
                guard line.hasPrefix(#"{"ok":true,"seq":"#), let seq = UInt64(line.dropFirst(17).dropLast()),
                      let value = inFlight.first else {
                    update { $0.failure = "unexpected reply \(line)" }
                    return true
                }
                inFlight.removeFirst()
                update { books in
                    if seq <= books.lastAcknowledgedSeq { books.failure = "seq went back: \(seq) after \(books.lastAcknowledgedSeq)" }
                    books.lastAcknowledged = value
                    books.lastAcknowledgedSeq = seq
                }
            }
        }
    }

    /// kvod accepts connections when this is called: at the start, and once
    /// the gate opens (the test restarted kvod and connected to it first).
    private func connectSocket() -> Int32? {
        try? UnixSockets.connect(socketPath)
    }
}

/// Holds writers back after a crash until the test has restarted and checked kvod.
final class Gate: @unchecked Sendable {
    // @unchecked: `opened` is guarded by `condition`.
    private let condition = NSCondition()
    private var opened = 0

    var generation: Int { condition.withLock { opened } }

    /// Lets every waiting writer through.
    func open() {
        condition.withLock {
            opened += 1
            condition.broadcast()
        }
    }

    /// Waits until the gate opens after `generation`; returns the new generation.
    func wait(after generation: Int) -> Int {
        condition.withLock {
            while opened <= generation { condition.wait() }
            return opened
        }
    }
}
