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
public struct ChangeStream: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = Change
    /// The stream ends by throwing only a ``KVOClientError``.
    public typealias Failure = KVOClientError

    let base: AsyncThrowingStream<Change, any Error>
    /// Keeps the connection open for as long as the stream exists.
    let connection: KVOConnection

    /// The iterator `for try await` uses; iterate a stream from one task at a time.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), connection: connection)
    }

    /// Gives the stream's changes in order; not `Sendable`: it belongs to the task that iterates.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Change, any Error>.AsyncIterator
        let connection: KVOConnection

        /// The next change; nil once the stream ended without an error (the task was cancelled).
        public mutating func next() async throws(KVOClientError) -> Change? {
            do {
                return try await base.next()
            } catch {
                throw Self.clientError(error)
            }
        }

        /// The next change, waited for on `actor` (what `for try await` calls).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KVOClientError) -> Change? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                throw Self.clientError(error)
            }
        }

        /// The stream is only ever finished with a ``KVOClientError``.
        private static func clientError(_ error: any Error) -> KVOClientError {
            error as? KVOClientError ?? KVOClientError(.connectionLost, "\(error)")
        }
    }
}

/// Feeds a ``ChangeStream`` from the connection's reader thread.
final class StreamSink: ChangeSink {
    let continuation: AsyncThrowingStream<Change, any Error>.Continuation

    init(_ continuation: AsyncThrowingStream<Change, any Error>.Continuation) {
        self.continuation = continuation
    }

    func deliver(_ change: Change) { continuation.yield(change) }

    func finish(_ error: KVOClientError) { continuation.finish(throwing: error) }
}
