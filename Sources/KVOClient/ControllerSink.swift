import Dispatch
import Synchronization

/// Carries one observation's changes from the connection to a
/// ``KVOController``'s queue, and calls its block there, after checking that
/// the observation is still wanted and the observer still exists.
///
/// The changes wait in the sink; one block on the queue at a time runs all
/// that are waiting, so a read's worth of changes costs one queue hop. What
/// waits is bounded in bytes: an observer that falls behind gets the latest
/// change per key path (``PendingChanges``).
///
/// @unchecked Sendable: `block` is called only on the controller's queue;
/// `isActive` is atomic; `pending` is locked; the rest is immutable.
final class ControllerSink<Observer: AnyObject>: ChangeSink, @unchecked Sendable {
    private weak var controller: KVOController<Observer>?
    private let queue: DispatchQueue
    private let key: ObservationKey
    private let block: KVOController<Observer>.AnyBlock
    private let isActive = Atomic<Bool>(true)
    private let pending: Locked<Pending>

    private struct Pending {
        var changes: PendingChanges
        /// How the observation ended, to report after the changes before it.
        var failure: KVOClientError?
        /// Whether a drain is on the queue or running: then nothing more is scheduled.
        var isDraining = false
        /// How many changes the sink was handed, and how many of them are done
        /// with: their block ran (or was skipped: unobserved, observer gone), or they were folded away.
        var received = 0
        var done = 0
        /// ``waitUntilDone(_:)``'s callers, each until `done` reaches its count.
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The waiters whose count `done` has reached, taken out of the list.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            let satisfied = waiters.filter { $0.count <= done }.map(\.continuation)
            waiters.removeAll { $0.count <= done }
            return satisfied
        }
    }

    /// `everyChange`: past the limit the observation ends with an error instead of folding (``DeliveryOptions/everyChange``).
    init(controller: KVOController<Observer>, key: ObservationKey, everyChange: Bool = false,
         block: @escaping KVOController<Observer>.AnyBlock) {
        self.controller = controller
        queue = controller.queue
        self.key = key
        self.block = block
        let limit = controller.connection.core.configuration.subscriberBufferLimit
        pending = Locked(Pending(changes: PendingChanges(limit: limit, everyChange: everyChange)))
    }

    /// Drops every change not yet delivered; called when unobserving.
    func deactivate() { isActive.store(false, ordering: .releasing) }

    func deliver(_ changes: [Delivered]) {
        let (schedule, folded, failed, satisfied) = pending.withLock { pending in
            let held = pending.changes.changes.count + changes.count
            var folded: [AckTicket] = []
            var failed = false
            // After a failure nothing more is taken (the block will not run for it: it is done with).
            if pending.failure == nil {
                do throws(KVOClientError) {
                    folded = try pending.changes.append(changes)
                } catch {
                    pending.failure = error
                    failed = true
                }
            }
            pending.received += changes.count
            pending.done += held - pending.changes.changes.count
            defer { pending.isDraining = true }
            return (!pending.isDraining, folded, failed, pending.satisfiedWaiters())
        }
        for ticket in folded { ticket.handled() }
        for continuation in satisfied { continuation.resume() }
        // A subscriber of every change fell behind: no more changes for it; the error follows the ones held.
        if failed { controller?.stopDelivery(key, sink: self) }
        if schedule { queue.async { [self] in drain() } }
    }

    /// How many changes the sink has been handed so far.
    var receivedCount: Int { pending.withLock { $0.received } }

    /// Returns once `count` of the changes handed to the sink are done with
    /// (their block has run, or will never run).
    func waitUntilDone(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isDone = pending.withLock { pending in
                if pending.done >= count { return true }
                pending.waiters.append((count, continuation))
                return false
            }
            if isDone { continuation.resume() }
        }
    }

    func finish(_ error: KVOClientError) {
        let schedule = pending.withLock { pending in
            pending.failure = pending.failure ?? error
            defer { pending.isDraining = true }
            return !pending.isDraining
        }
        if schedule { queue.async { [self] in drain() } }
    }

    /// Runs on `queue`: the block for every change waiting, then the failure
    /// if the observation ended; again later if more came meanwhile.
    private func drain() {
        let (changes, failure) = pending.withLock { pending in
            defer { pending.failure = nil }
            return (pending.changes.takeAll(), pending.failure)
        }
        run(changes)
        if let failure, isActive.exchange(false, ordering: .acquiringAndReleasing) {
            controller?.observationFailed(key, sink: self, failure)
        }
        let (more, satisfied) = pending.withLock { pending in
            pending.done += changes.count
            if pending.changes.isEmpty, pending.failure == nil { pending.isDraining = false }
            return (pending.isDraining, pending.satisfiedWaiters())
        }
        for continuation in satisfied { continuation.resume() }
        // Another turn of the queue rather than a loop here: other work on a shared queue (.main) gets its turn.
        if more { queue.async { [self] in drain() } }
    }

    private func run(_ changes: [Delivered]) {
        // The weak references are read once per batch, not once per change.
        let controller = self.controller
        let observer = controller?.observer
        for delivered in changes {
            // Handled once the block returned, or once it is clear no block will run.
            defer { delivered.ticket?.handled() }
            guard isActive.load(ordering: .acquiring), let controller else { continue }
            guard let observer else {
                controller.observerIsGone()
                continue
            }
            block(observer, delivered.change.object, delivered.change)
        }
    }
}
