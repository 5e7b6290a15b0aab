/// The changes of one or more key paths of an object, as an `AsyncSequence`
/// (from ``KVOConnection/changes(of:keyPath:options:delivery:context:since:)``).
///
/// Observing starts when the stream is made, so a change requested on the
/// same connection afterwards is in it. The stream keeps its connection
/// open. It ends, and its observations are withdrawn on the daemon, when the
/// task iterating it is cancelled or ends, or when the stream is dropped; it
/// throws ``KVOClientError`` when the daemon refuses the observation or the
/// connection is lost or closed. Changes are buffered without limit until
/// they are consumed.
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

    let base: AsyncThrowingStream<Delivered, any Error>
    /// Keeps the connection open for as long as the stream exists.
    let connection: KVOConnection

    /// The iterator `for try await` uses; iterate a stream from one task at a time.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), connection: connection, ticket: nil)
    }

    /// Gives the stream's changes in order; not `Sendable`: it belongs to the task that iterates.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Delivered, any Error>.AsyncIterator
        let connection: KVOConnection
        /// The change last returned, while it awaits being handled (acknowledging observations only).
        var ticket: AckTicket?

        /// The next change; nil once the stream ended without an error (the task was cancelled).
        /// Asking for it counts the change returned before as handled.
        public mutating func next() async throws(KVOClientError) -> Change? {
            settle()
            do {
                return take(try await base.next())
            } catch {
                throw Self.clientError(error)
            }
        }

        /// The next change, waited for on `actor` (what `for try await` calls).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KVOClientError) -> Change? {
            settle()
            do {
                return take(try await base.next(isolation: actor))
            } catch {
                throw Self.clientError(error)
            }
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

        private mutating func take(_ delivered: Delivered?) -> Change? {
            ticket = delivered?.ticket
            return delivered?.change
        }

        /// The stream is only ever finished with a ``KVOClientError``.
        private static func clientError(_ error: any Error) -> KVOClientError {
            error as? KVOClientError ?? KVOClientError(.connectionLost, "\(error)")
        }
    }
}

/// A change on its way to a stream's consumer, with its ticket if it is to be acknowledged.
struct Delivered: Sendable {
    var change: Change
    var ticket: AckTicket?
}

/// Feeds a ``ChangeStream`` from the connection's reader thread.
final class StreamSink: ChangeSink {
    let continuation: AsyncThrowingStream<Delivered, any Error>.Continuation

    init(_ continuation: AsyncThrowingStream<Delivered, any Error>.Continuation) {
        self.continuation = continuation
    }

    func deliver(_ change: Change, ticket: AckTicket?) { continuation.yield(Delivered(change: change, ticket: ticket)) }

    func finish(_ error: KVOClientError) { continuation.finish(throwing: error) }
}
