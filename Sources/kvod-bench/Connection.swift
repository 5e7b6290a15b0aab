#if canImport(Glibc)
import Glibc
#endif

/// One connection of the load generator: a non-blocking socket, the
/// unparsed tail of what it read, the unsent tail of what it wrote, and what
/// it has seen. Owned by one thread at a time (the one whose ``Poller`` holds it).
final class Connection: InboundHandler {
    let fd: Int32
    let wire: Wire
    private var unparsed: [UInt8] = []
    private(set) var unsent: [UInt8] = []
    /// Set by the poller while `unsent` waits for the socket to drain.
    var wantsWritable = false
    /// Where this connection sits in its poller.
    var pollerSlot = -1

    // Requests.
    var sent = 0
    private(set) var replies = 0
    /// How many changes each request in flight carries, oldest first, when
    /// one carries several (an etcd `Txn` of many puts); empty: one each.
    private var changesPerReply: [Int] = []
    private var changesPerReplyHead = 0
    private(set) var failures = 0
    private(set) var firstFailure: String?
    /// Set when the server closed the connection or a call failed.
    private(set) var broken: String?

    // Events.
    private(set) var events = 0
    private(set) var outOfOrder = 0
    /// Indexes passed over (a later index arrived first): events kvod coalesced, or lost.
    private(set) var skipped = 0
    /// The earlier events the events received stand for (kvod's `"coalesced":N`).
    private(set) var coalesced = 0
    /// Bytes read from the server.
    private(set) var bytesRead = 0
    /// The last payload index seen per key, for the order check.
    var lastIndex: [Int] = []
    /// Where latencies go (the thread's histogram); nil: not recorded.
    var latencies: Histogram?
    /// The time the bytes being parsed were read.
    var readAt: UInt64 = 0

    /// When each change reached the observers (the cluster fan-out); nil: not kept.
    var arrivals: FanoutArrivals?
    /// etcd's HTTP responses, which need state across reads (etcd connections only).
    private let http: HTTPResponseReader?

    init(path: String, wire: Wire) throws(BenchError) {
        fd = try UnixSocket.connect(path)
        self.wire = wire
        http = nil
        UnixSocket.setNonBlocking(fd)
    }

    /// A connection to etcd's JSON gateway on 127.0.0.1:`port`.
    init(port: Int, wire: Wire) throws(BenchError) {
        fd = try LoopbackTCP.connect(port: port)
        self.wire = wire
        http = HTTPResponseReader()
        UnixSocket.setNonBlocking(fd)
    }

    deinit { close(fd) }

    // MARK: Writing

    /// Writes `bytes` now as far as the socket takes them; keeps the rest
    /// for ``flush()``. Returns false when something is left unsent.
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard unsent.isEmpty else {
            unsent.append(contentsOf: bytes)
            return flush()
        }
        let written = write(bytes)
        if written < bytes.count {
            unsent.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[written...]))
            return false
        }
        return true
    }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { send($0) } }

    /// Writes what is queued; true when nothing is left.
    @discardableResult
    func flush() -> Bool {
        guard !unsent.isEmpty else { return true }
        let written = unsent.withUnsafeBytes { write($0) }
        unsent.removeFirst(written)
        return unsent.isEmpty
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                if n < 0 && errno != EAGAIN { broken = broken ?? "send: \(UnixSocket.errorText())" }
                break
            }
        }
        return offset
    }

    // MARK: Reading

    /// Reads once into `scratch` and parses what arrived. Returns false when
    /// the socket had nothing (EAGAIN) or is finished.
    @discardableResult
    func readAvailable(_ scratch: UnsafeMutableRawBufferPointer) -> Bool {
        let n = read(fd, scratch.baseAddress, scratch.count)
        guard n > 0 else {
            if n == 0 {
                broken = broken ?? "the server closed the connection"
            } else if errno != EAGAIN && errno != EINTR {
                broken = broken ?? "read: \(UnixSocket.errorText())"
            }
            return false
        }
        bytesRead += n
        let bytes = UnsafeRawBufferPointer(rebasing: scratch[..<n])
        if let http {
            http.consume(bytes, self)
        } else if unparsed.isEmpty {
            let used = wire.parse(bytes, self)
            if used < n { unparsed.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[used...])) }
        } else {
            unparsed.append(contentsOf: bytes)
            let used = unparsed.withUnsafeBytes { wire.parse($0, self) }
            unparsed.removeFirst(used)
        }
        return true
    }

    // MARK: InboundHandler

    /// The next request sent carries `changes` changes: its reply answers them all.
    func expectReply(covering changes: Int) {
        if changesPerReplyHead > 1024 {
            changesPerReply.removeFirst(changesPerReplyHead)
            changesPerReplyHead = 0
        }
        changesPerReply.append(changes)
    }

    func reply(ok: Bool, line: UnsafeRawBufferPointer) {
        if changesPerReplyHead < changesPerReply.count {
            replies += changesPerReply[changesPerReplyHead]
            changesPerReplyHead += 1
        } else {
            replies += 1
        }
        if !ok {
            failures += 1
            if firstFailure == nil { firstFailure = String(decoding: line.prefix(300), as: UTF8.self) }
        }
    }

    func event(key: Int, index: Int, sentAt: UInt64) {
        events += 1
        if index >= 0, key >= 0, key < lastIndex.count {
            if index <= lastIndex[key] { outOfOrder += 1 } else { skipped += index - lastIndex[key] - 1 }
            lastIndex[key] = index
        }
        if sentAt > 0, let latencies, readAt > sentAt { latencies.record(readAt - sentAt) }
        if index >= 0, let arrivals { arrivals.record(change: index, at: monotonicNanoseconds()) }
    }

    func coalesced(_ count: Int) { coalesced += count }

    /// What is wrong with this connection, if anything.
    var problem: String? {
        if let broken { return broken }
        if let firstFailure { return "error reply: \(firstFailure)" }
        return nil
    }
}
