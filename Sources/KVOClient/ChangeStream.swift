/// The changes of one or more key paths of an object, as an `AsyncSequence`
/// (from ``KVOConnection/changes(of:keyPath:options:delivery:context:since:)``).
///
/// Observing starts when the stream is made, so a change requested on the
/// same connection afterwards is in it. The stream keeps its connection
/// open. It ends, and its observations are withdrawn on the daemon, when the
/// task iterating it is cancelled, when the loop is left (its iterator goes,
/// also while the stream itself is still held, e.g. in a `let`), or when the
/// stream is dropped: a stream is iterated once. It
/// throws ``KVOClientError`` when the daemon refuses the observation or the
/// connection is lost or closed. Changes wait until they are consumed, and
/// reach the iterator a read's worth at a time; past
/// ``KVOConnection/Configuration/subscriberBufferLimit`` bytes of them, a
/// consumer that falls behind gets only the latest change per key path, with
/// ``Change/coalesced`` counting the ones it stands for (with
/// ``DeliveryOptions/everyChange``, the stream throws `limit_exceeded` instead,
/// after the changes held).
///
/// For an observation that acknowledges (``DeliveryOptions/acknowledges``),
/// a change counts as handled when the consumer asks for the next one (the
/// next turn of `for try await`), or at ``AsyncIterator/acknowledge()``;
/// changes still buffered when the stream ends are never acknowledged.
public struct ChangeStream: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = Change
    /// The stream ends by throwing only a ``KVOClientError``.
    public typealias Failure = KVOClientError

    /// Wakes the iterator when its sink has changes (one wake-up per read, not per change).
    let base: AsyncStream<Void>
    /// Where the changes wait for the iterator.
    let sink: StreamSink
    /// Keeps the connection open for as long as the stream exists.
    let connection: KVOConnection

    /// The iterator `for try await` uses; iterate a stream from one task at a time.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(signals: base.makeAsyncIterator(), sink: sink, connection: connection)
    }

    /// Ends the stream's observations when the last copy of its iterator
    /// goes: leaving a `for try await` loop (`break`, `return`, a throw)
    /// unobserves, though the stream may be held on in a `let` or a property.
    final class IterationLease: Sendable {
        let sink: StreamSink
        init(_ sink: StreamSink) { self.sink = sink }
        deinit { sink.end() }
    }

    /// Gives the stream's changes in order; not `Sendable`: it belongs to the task that iterates.
    ///
    /// It takes all the changes its sink holds at once, so most calls of
    /// ``next()`` return one from its own buffer without suspending.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var signals: AsyncStream<Void>.AsyncIterator
        let sink: StreamSink
        let connection: KVOConnection
        /// Changes taken from the sink, returned from ``position`` on.
        var buffer: [Delivered] = []
        var position = 0
        /// The change last returned, while it awaits being handled (acknowledging observations only).
        var ticket: AckTicket?
        /// The stream threw its error or ended: only nil from now on.
        var isDone = false
        /// Unobserves when the iterator goes.
        let lease: IterationLease

        init(signals: AsyncStream<Void>.AsyncIterator, sink: StreamSink, connection: KVOConnection) {
            self.signals = signals
            self.sink = sink
            self.connection = connection
            lease = IterationLease(sink)
        }

        /// The next change; nil once the stream ended without an error (the task was cancelled).
        /// Asking for it counts the change returned before as handled.
        public mutating func next() async throws(KVOClientError) -> Change? {
            try await next(isolation: nil)
        }

        /// The next change, waited for on `actor` (what `for try await` calls).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KVOClientError) -> Change? {
            settle()
            while !isDone {
                if position < buffer.count {
                    let delivered = buffer[position]
                    position += 1
                    ticket = delivered.ticket
                    return delivered.change
                }
                if try takeFromSink() { continue }
                if await signals.next(isolation: actor) == nil {
                    // Ended: finished by the connection (its changes and error wait in the sink), or cancelled.
                    if try takeFromSink() { continue }
                    isDone = true
                }
            }
            return nil
        }

        /// Counts the change last returned as handled now, rather than at the
        /// next ``next()``, and returns once kvod has recorded the
        /// acknowledgement of everything this connection has handled: for a
        /// program that acts on a change and then stops (`kvoctl observe
        /// --ack --count 1`). Does nothing more than a round trip for an
        /// observation that does not acknowledge.
        public mutating func acknowledge() async throws(KVOClientError) {
            settle()
            try await connection.core.acknowledgeHandled()
        }

        private mutating func settle() {
            ticket?.handled()
            ticket = nil
        }

        /// Moves the sink's changes into the buffer (true), or throws the
        /// error the stream ended with once they are all returned; false when there is nothing.
        private mutating func takeFromSink() throws(KVOClientError) -> Bool {
            switch sink.take() {
            case .changes(let changes):
                buffer = changes
                position = 0
                return true
            case .failed(let error):
                isDone = true
                throw error
            case .nothing:
                return false
            }
        }
    }
}

/// Feeds a ``ChangeStream`` from the connection's reader thread: the
/// changes wait here until the iterator takes them all at once, and one
/// signal per delivery wakes it.
final class StreamSink: ChangeSink {
    enum Taken {
        case changes([Delivered])
        /// Every change was taken and the stream ended with this error.
        case failed(KVOClientError)
        case nothing
    }

    private struct Pending {
        var changes: PendingChanges
        var failure: KVOClientError?
    }

    private let signals: AsyncStream<Void>.Continuation
    private let pending: Locked<Pending>

    /// `limit`: the bytes of changes held before they are folded (``PendingChanges``);
    /// `everyChange`: past it the stream ends with an error instead (``DeliveryOptions/everyChange``).
    init(_ signals: AsyncStream<Void>.Continuation, limit: Int, everyChange: Bool = false) {
        self.signals = signals
        pending = Locked(Pending(changes: PendingChanges(limit: limit, everyChange: everyChange)))
    }

    func deliver(_ changes: [Delivered]) {
        let (folded, failed) = pending.withLock { pending -> ([AckTicket], Bool) in
            guard pending.failure == nil else { return ([], false) }  // ended: takes nothing more
            do throws(KVOClientError) {
                return (try pending.changes.append(changes), false)
            } catch {
                pending.failure = error
                return ([], true)
            }
        }
        for ticket in folded { ticket.handled() }
        // A subscriber of every change fell behind: the stream ends (its `onTermination` unobserves), after
        // the changes held.
        if failed { signals.finish() } else { signals.yield() }
    }

    func finish(_ error: KVOClientError) {
        pending.withLock { $0.failure = $0.failure ?? error }
        signals.finish()
    }

    /// Nobody iterates any more: ends the stream, and so its observations (its
    /// `onTermination`), and lets go of the changes nobody will take.
    func end() {
        signals.finish()
        _ = pending.withLock { $0.changes.takeAll() }
    }

    /// Everything waiting, for the iterator.
    func take() -> Taken {
        pending.withLock { pending in
            if !pending.changes.isEmpty { return .changes(pending.changes.takeAll()) }
            return pending.failure.map(Taken.failed) ?? .nothing
        }
    }
}
