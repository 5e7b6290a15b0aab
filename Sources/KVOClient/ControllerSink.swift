import Dispatch
import Synchronization

/// Carries one observation's changes from the connection to a
/// ``KVOController``'s queue, and calls its block there, after checking that
/// the observation is still wanted and the observer still exists.
///
/// @unchecked Sendable: `block` is called only on the controller's queue;
/// `isActive` is atomic; the rest is immutable.
final class ControllerSink<Observer: AnyObject>: ChangeSink, @unchecked Sendable {
    private weak var controller: KVOController<Observer>?
    private let queue: DispatchQueue
    private let key: ObservationKey
    private let block: KVOController<Observer>.Block
    private let isActive = Atomic<Bool>(true)

    init(controller: KVOController<Observer>, key: ObservationKey, block: @escaping KVOController<Observer>.Block) {
        self.controller = controller
        queue = controller.queue
        self.key = key
        self.block = block
    }

    /// Drops every change not yet delivered; called when unobserving.
    func deactivate() { isActive.store(false, ordering: .releasing) }

    func deliver(_ change: Change, ticket: AckTicket?) {
        queue.async { [self] in
            // Handled once the block returned, or once it is clear no block will run.
            defer { ticket?.handled() }
            guard isActive.load(ordering: .acquiring), let controller else { return }
            guard let observer = controller.observer else {
                controller.observerIsGone()
                return
            }
            block(observer, change.object, change)
        }
    }

    func finish(_ error: KVOClientError) {
        queue.async { [self] in
            guard isActive.exchange(false, ordering: .acquiringAndReleasing) else { return }
            controller?.observationFailed(key, sink: self, error)
        }
    }
}
