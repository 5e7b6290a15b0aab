import Foundation
import Glibc

/// A test helper's own failure (a deadline passed, a process misbehaved), with what it was waiting for.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How often a wait checks a condition that nothing in this process signals
/// (kvod's state asked over a socket, a file, another process): no event
/// exists for those, so they are the one thing still polled.
public let unsignalledRecheckInterval = 0.005

/// Checks `condition` until it holds or `timeout` seconds pass (then throws),
/// blocking the calling thread in between: for synchronous tests.
///
/// With `recheckEvery` nil (a condition only signalled events change: a
/// ``Recorder``'s values, a process's exit) it checks again whenever
/// ``WaitSignal/shared`` is notified; otherwise every `recheckEvery` seconds.
///
/// Unavailable from async code: a blocked thread of Swift's cooperative pool
/// (one per core) cannot resume any other task, such as a KVOClient request
/// whose reply has arrived. There, use the async overload with an async
/// closure (`{ () async throws -> Bool in … }`): with a synchronous closure
/// literal Swift would pick this overload.
@available(*, noasync, message: "blocks a cooperative thread; use the async waitUntil with an async closure")
public func waitUntil(_ what: String, timeout: Double, recheckEvery interval: Double? = unsignalledRecheckInterval,
                      _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        let seen = WaitSignal.shared.generation
        if try condition() { return }
        let now = Date()
        if now > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        let wake = interval.map { min(deadline, now.addingTimeInterval($0)) } ?? deadline
        WaitSignal.shared.wait(after: interval == nil ? seen : nil, until: wake)
    }
}

/// Checks an async `condition` until it holds or `timeout` seconds pass
/// (then throws), suspending in between, so that the thread is free for
/// other tasks meanwhile; when it checks again is as for the synchronous form.
///
/// The deadline is checked between checks: a `condition` that never returns
/// (an awaited reply that never comes) is bounded by its own deadline, e.g.
/// ``withDeadline(_:seconds:_:)`` or the connection's request timeout.
public func waitUntil(_ what: String, timeout: Double, recheckEvery interval: Double? = unsignalledRecheckInterval,
                      _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        let seen = WaitSignal.shared.generation
        if try await condition() { return }
        let now = Date()
        if now > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        let wake = interval.map { min(deadline, now.addingTimeInterval($0)) } ?? deadline
        await WaitSignal.shared.next(after: interval == nil ? seen : nil, until: wake)
    }
}

/// The result of `body`, or a failure once `timeout` seconds pass, also when
/// `body` never returns: it runs in a task of its own, which is cancelled and
/// abandoned at the deadline (a task group would wait for it, and a
/// continuation that is never resumed ignores cancellation).
public func withDeadline<T: Sendable>(_ what: String, seconds timeout: Double,
                                      _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = FirstOutcome<T>()
    return try await withCheckedThrowingContinuation { continuation in
        let work = Task(executorPreference: TestThreads.shared) { try await body() }
        // A timer the system fires at the deadline, not a task that sleeps until it.
        let timer = DispatchWorkItem {
            outcome.settle(continuation, with: .failure(TestFailure("timed out after \(timeout)s waiting for \(what)")))
            work.cancel()
        }
        WaitSignal.timers.asyncAfter(deadline: .now() + timeout, execute: timer)
        Task(executorPreference: TestThreads.shared) {
            let result = await work.result
            timer.cancel()
            outcome.settle(continuation, with: result)
        }
    }
}

/// Resumes a continuation with whichever outcome comes first.
///
/// @unchecked Sendable: `isSettled` is only touched with `lock` held.
private final class FirstOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var isSettled = false

    func settle(_ continuation: CheckedContinuation<T, any Error>, with result: Result<T, any Error>) {
        let isFirst = lock.withLock {
            defer { isSettled = true }
            return !isSettled
        }
        if isFirst { continuation.resume(with: result) }
    }
}
