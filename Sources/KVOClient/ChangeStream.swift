/// The changes of one or more key paths of an object, as an `AsyncSequence`
/// (from ``KVOConnection/changes(of:keyPath:options:context:)``).
///
/// Observing starts when the stream is made, so a change requested on the
/// same connection afterwards is in it. The stream keeps its connection
/// open. It ends, and its observations are withdrawn on the daemon, when the
/// task iterating it is cancelled or ends, or when the stream is dropped; it
/// throws ``KVOClientError`` when the daemon refuses the observation or the
/// connection is lost or closed. Changes are buffered without limit until
/// they are consumed.
public struct ChangeStream: AsyncSequence, Sendable {
    public typealias Element = Change
    public typealias Failure = KVOClientError

    let base: AsyncThrowingStream<Change, any Error>
    /// Keeps the connection open for as long as the stream exists.
    let connection: KVOConnection

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), connection: connection)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Change, any Error>.AsyncIterator
        let connection: KVOConnection

        public mutating func next() async throws(KVOClientError) -> Change? {
            do {
                return try await base.next()
            } catch {
                throw Self.clientError(error)
            }
        }

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
