import Dispatch
import Foundation

/// Threads that run bodies to completion; ``join()`` waits for all of them.
/// Each body gets its own thread (not a shared pool), so a blocking
/// `epoll_wait` in one never holds up another.
final class ThreadGroup {
    private let group = DispatchGroup()

    init(_ bodies: [@Sendable () -> Void]) {
        for body in bodies {
            group.enter()
            let thread = Thread { [group] in
                body()
                group.leave()
            }
            thread.start()
        }
    }

    /// Waits until every body has returned.
    func join() { group.wait() }
}

/// Hands an object that is not `Sendable` to one other thread.
///
/// `@unchecked`: the sender gives the object up until ``ThreadGroup/join()``
/// returns (workers are built, run on their own thread, then read after the
/// join), so at any moment exactly one thread touches it.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}
