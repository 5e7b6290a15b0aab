import DequeModule
import Dispatch
import Foundation
import KVOValues

/// The machinery behind a ``KVOConnection``: the socket, a reader thread, a
/// serial write queue, the FIFO of replies awaited (with the callers'
/// deadlines, ConnectionCore+Deadlines.swift), and the table of
/// observations. Safe from any thread.
///
/// Threads: callers enqueue lines (under the lock, so that the order of
/// lines on the socket is the order of ``State/awaiting``); one serial queue
/// writes them; one thread per socket reads, and is the only code that pops
/// replies and routes events, so both are handled in the order kvod sent
/// them. Sinks and callers' completions run on the reader thread with the
/// lock released, and must not block (FBKVOController's "unlock prior to callout").
final class ConnectionCore: Sendable {
    struct State {
        enum Phase {
            /// Reading from `socket`; `generation` tells one socket's reader from the next one's.
            case connected(UnixSocket, generation: Int)
            /// Between a broken socket and a new one (only with a reconnect policy).
            case reconnecting
            /// For good; every request fails with this error.
            case closed(KVOClientError)
        }

        var phase: Phase
        var generation = 0
        /// One per request written to the current socket and not yet answered, in order.
        var awaiting = Deque<PendingReply>()
        /// Requests made while reconnecting, sent once the observations are registered again.
        var backlog: [(line: [UInt8], reply: PendingReply)] = []
        /// The daemon observations of this connection, by (object, key path).
        var entries: [ObservationKey: ObservationEntry] = [:] {
            didSet { lastRouted = nil }
        }
        /// The entry the last event was routed to, while ``entries`` has not
        /// changed: most events of a read are one observation's, and comparing
        /// its key costs less than hashing it.
        var lastRouted: (key: ObservationKey, entry: ObservationEntry)?

        /// `entries[key]`, for routing an event.
        mutating func routedEntry(_ key: ObservationKey) -> ObservationEntry? {
            if let lastRouted, lastRouted.key == key { return lastRouted.entry }
            guard let entry = entries[key] else { return nil }
            lastRouted = (key, entry)
            return entry
        }
        /// The compact observations on the current socket, by the number
        /// their events carry (ConnectionCore+CompactEvents.swift).
        var compactKeys: [UInt64: ObservationKey] = [:]
        /// The highest seq seen in any event or reply: a later subscriber's
        /// initial seq when a `get` reply carries none (an older kvod).
        var latestSeq: UInt64 = 0
        /// The epoch of the kvod on the current socket, from an `observe`
        /// reply on it; nil until one came (and again after the socket ended).
        var epoch: String?
        /// Callers with a deadline, in the order of their requests, so by
        /// deadline; answered ones leave from the front (ConnectionCore+Deadlines.swift).
        var deadlines = Deque<ReplyWaiter>()
        /// A resumed observation was answered `unavailable` (over etcd, a kvod
        /// still catching up with what another kvod told this connection): the
        /// next reconnect waits the policy's longest delay before its first try.
        var reconnectsLater = false
        /// Whether a check of ``deadlines`` is scheduled.
        var isDeadlineCheckScheduled = false
        /// What the ack observations have handled and what was acked (ConnectionCore+Acknowledgements.swift).
        var acks = AckLedger()

        var isConnected: Bool {
            if case .connected = phase { true } else { false }
        }
    }

    let configuration: KVOConnection.Configuration
    let state: Locked<State>
    let writes = DispatchQueue(label: "KVOClient.writes")
    /// Cuts a reconnect wait short when the connection is closed.
    let wake = DispatchSemaphore(value: 0)

    init(configuration: KVOConnection.Configuration) throws(KVOClientError) {
        self.configuration = configuration
        let socket = try UnixSocket.connect(configuration)
        state = Locked(State(phase: .connected(socket, generation: 0)))
        startReading(socket, generation: 0)
    }

    // MARK: Sending

    /// Sends `line`; `reply` learns the outcome, a caller by its deadline at
    /// the latest. When the connection is closed, `reply` fails at once.
    func send(_ line: [UInt8], _ reply: PendingReply) {
        let failure = state.withLock { state in
            let failure = enqueue(line, reply, in: &state)
            if failure == nil, case .caller(let waiter) = reply { watchDeadline(of: waiter, in: &state) }
            return failure
        }
        if let failure { reply.fail(failure) }
    }

    /// Writes `line` (connected), keeps it for later (reconnecting), or
    /// returns why it cannot go (closed). Call with the lock held.
    func enqueue(_ line: [UInt8], _ reply: PendingReply, in state: inout State) -> KVOClientError? {
        switch state.phase {
        case .connected(let socket, _):
            state.awaiting.append(reply)
            writes.async {
                // A failed write means a broken socket: make sure the reader notices.
                if !socket.sendAll(line) { socket.shutdown() }
            }
            return nil
        case .reconnecting:
            state.backlog.append((line, reply))
            return nil
        case .closed(let error):
            return error
        }
    }

    // MARK: Closing

    /// Ends the connection for good: requests waiting fail and every
    /// subscription finishes with `error`.
    func close(_ error: KVOClientError = KVOClientError(.closed, "the connection was closed")) {
        let (failed, ended) = state.withLock { state -> ([PendingReply], [Subscription]) in
            switch state.phase {
            case .closed: return ([], [])
            case .connected(let socket, _):
                // Under the lock, so the reader cannot have closed the descriptor yet;
                // it wakes with end-of-stream and closes it.
                socket.shutdown()
            case .reconnecting: break
            }
            state.phase = .closed(error)
            let failed = Array(state.awaiting) + state.backlog.map(\.reply)
            state.awaiting.removeAll()
            state.backlog.removeAll()
            state.deadlines.removeAll()
            return (failed, Self.endAll(&state))
        }
        wake.signal()
        for reply in failed { reply.fail(error) }
        for subscription in ended { subscription.sink.finish(error) }
    }

    /// Ends every subscription and forgets every entry. Call with the lock held,
    /// then finish the sinks of the subscriptions returned, outside it.
    static func endAll(_ state: inout State) -> [Subscription] {
        var ended: [Subscription] = []
        for entry in state.entries.values {
            for subscription in entry.subscriptions where subscription.phase != .ended {
                subscription.phase = .ended
                ended.append(subscription)
            }
            entry.subscriptions.removeAll()
        }
        state.entries.removeAll()
        return ended
    }

    // MARK: Reading

    /// The reader thread's name: at most 15 bytes, which is all Linux keeps
    /// (`/proc/self/task/*/comm`, `top -H`, gdb), so it shows whole.
    static let readerThreadName = "KVOClient.read"

    func startReading(_ socket: UnixSocket, generation: Int) {
        let thread = Thread { [self] in
            Self.nameCurrentThread(Self.readerThreadName)
            readLoop(socket, generation: generation)
        }
        thread.start()
    }

    /// Names the calling thread through proc(5)'s `/proc/thread-self/comm`. Foundation's
    /// `Thread.name` reaches the system only when the thread starting it has recorded the new
    /// thread's handle, which a thread that names itself at once can outrun (seen under TSan);
    /// `pthread_setname_np` is not in Swift's Glibc module.
    private static func nameCurrentThread(_ name: String) {
        let descriptor = Glibc.open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        let bytes = Array(name.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }

    private func readLoop(_ socket: UnixSocket, generation: Int) {
        var reader = InboundReader()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var failure: KVOClientError?
        while failure == nil {
            let received = buffer.withUnsafeMutableBytes { socket.receive(into: $0) }
            switch received {
            case .failure(let error):
                failure = error
            case .success(0):
                failure = KVOClientError(.connectionLost, "kvod closed the connection")
            case .success(let count):
                failure = buffer.withUnsafeBytes { raw in
                    reader.read(UnsafeRawBufferPointer(rebasing: raw[..<count]), self)
                }
            }
        }
        connectionEnded(socket, generation: generation, failure ?? KVOClientError(.connectionLost, "ended"))
    }

    /// What the reader thread keeps from one read to the next.
    struct InboundReader {
        // kvod is trusted to send sane lines; a whole document can exceed any fixed limit.
        private var framer = LineFramer(maxLineBytes: Int.max)
        private var scanner = LineScanner()
        private var batch = DeliveryBatch()

        /// Handles the lines of one read and hands each sink its changes;
        /// returns why the connection must end, if a line says so.
        mutating func read(_ bytes: UnsafeRawBufferPointer, _ core: ConnectionCore) -> KVOClientError? {
            var failure: KVOClientError?
            framer.feed(bytes) { frame in
                guard failure == nil, case .line(let line) = frame else { return }
                do throws(KVOClientError) { try core.handle(line, &scanner, &batch) } catch { failure = error }
            }
            // One hand-off per sink per read; what was read before a protocol violation still counts.
            batch.flush()
            return failure
        }
    }

    /// One line: read by the scanner when it knows the line's shape, by the full reader otherwise.
    /// The changes go into `batch`; a reply is handled at once, after the changes before it are handed on.
    fileprivate func handle(_ line: UnsafeRawBufferPointer, _ scanner: inout LineScanner,
                        _ batch: inout DeliveryBatch) throws(KVOClientError) {
        let inbound: InboundLine
        if let scanned = scanner.scan(line) { inbound = scanned } else { inbound = try InboundLine.parse(line) }
        switch inbound {
        case .event(let event): route(event, line, into: &batch)
        case .compactChange(let number, let event, let object):
            try routeCompact(number, event, object: object, line, into: &batch)
        case .otherEvent: break
        case .reply(let result, let seq):
            // A caller answered (or a subscription going live) sees every change sent before the reply.
            batch.flush()
            try complete(result, seq: seq, line)
        }
    }

    /// Hands a reply to the request it answers: the oldest one awaiting (also
    /// when its caller stopped waiting at its deadline: then it is dropped).
    private func complete(_ result: Result<JSONObject, KVOClientError>, seq: UInt64?,
                          _ line: UnsafeRawBufferPointer) throws(KVOClientError) {
        let pending = state.withLock { state -> PendingReply? in
            if let seq { state.latestSeq = max(state.latestSeq, seq) }
            let pending = state.awaiting.popFirst()
            if case .caller(let waiter)? = pending, state.deadlines.first === waiter { state.deadlines.removeFirst() }
            return pending
        }
        guard let pending else { throw KVOClientError(.protocolViolation, "kvod sent a reply to no request") }
        switch pending {
        case .caller(let waiter): waiter.answer(result, line: line)
        case .registration(let entry, _): registrationAnswered(entry, result)
        case .initialValue(let subscription): initialValueArrived(for: subscription, result, seq: seq)
        case .acknowledgement: acknowledgementAnswered()
        case .optionsChange(let entry): optionsChangeUnobserved(entry)
        case .discard: break
        }
    }
}
