import Dispatch
import KVOValues
import Synchronization

/// A caller waiting for the reply to one request. It is told exactly once:
/// by the reply, by the connection failing, or by its deadline, whichever
/// comes first; whatever comes later is dropped. So a reply that arrives
/// after its deadline still takes its place in the connection's FIFO of
/// replies, and is discarded there.
///
/// Sendable: `isSettled` is atomic; the rest is immutable.
final class ReplyWaiter: Sendable {
    /// What the caller wants of the reply.
    enum Handler: Sendable {
        /// The reply's fields, or its error (the async API).
        case fields(@Sendable (Result<JSONObject, KVOClientError>) -> Void)
        /// The reply line as kvod sent it, error replies included (``KVOConnection/sendRaw(_:onReply:)``).
        case line(@Sendable (Result<String, KVOClientError>) -> Void)
    }

    /// When the caller stops waiting; nil: never.
    let deadline: DispatchTime?
    private let handler: Handler
    private let isSettled = Atomic<Bool>(false)

    init(deadline: DispatchTime?, _ handler: Handler) {
        self.deadline = deadline
        self.handler = handler
    }

    /// Whether the caller has been told already.
    var hasSettled: Bool { isSettled.load(ordering: .acquiring) }

    /// Hands over kvod's reply (`line` is the whole reply line).
    func answer(_ result: Result<JSONObject, KVOClientError>, line: UnsafeRawBufferPointer) {
        guard claim() else { return }
        switch handler {
        case .fields(let done): done(result)
        case .line(let done): done(.success(String(decoding: line, as: UTF8.self)))
        }
    }

    /// Tells the caller that no reply will reach it.
    func fail(_ error: KVOClientError) {
        guard claim() else { return }
        switch handler {
        case .fields(let done): done(.failure(error))
        case .line(let done): done(.failure(error))
        }
    }

    /// Called by the caller once resumed with the reply: an acquiring load
    /// that pairs with `claim()`, so that ThreadSanitizer sees the reply's
    /// memory handed over from the reader thread. It cannot see the Swift
    /// runtime's own ordering when a reply overtakes the caller's `await`
    /// (a CI run reported that as a race on the reply's dictionary).
    func handOver() { _ = isSettled.load(ordering: .acquiring) }

    /// True for the first caller only.
    private func claim() -> Bool { !isSettled.exchange(true, ordering: .acquiringAndReleasing) }
}
