import Foundation
import Glibc

/// A test helper's own failure (a deadline passed, a process misbehaved), with what it was waiting for.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` seconds pass (then throws),
/// sleeping the calling thread in between: for synchronous tests.
///
/// Unavailable from async code: a blocked thread of Swift's cooperative pool
/// (one per core) cannot resume any other task, such as a KVOClient request
/// whose reply has arrived. There, use the async overload with an async
/// closure (`{ () async throws -> Bool in … }`): with a synchronous closure
/// literal Swift would pick this overload.
@available(*, noasync, message: "blocks a cooperative thread; use the async waitUntil with an async closure")
public func waitUntil(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        usleep(5_000)
    }
}

/// Polls an async `condition` until it holds or `timeout` seconds pass (then
/// throws), suspending with `Task.sleep` in between, so that the thread is
/// free for other tasks meanwhile.
///
/// The deadline is checked between polls: a `condition` that never returns
/// (an awaited reply that never comes) is bounded by its own deadline, e.g.
/// ``withDeadline(_:seconds:_:)`` or the connection's request timeout.
public func waitUntil(_ what: String, timeout: Double, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while true {
        if try await condition() { return }
        if ContinuousClock.now > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        try await Task.sleep(for: .milliseconds(5))
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
        let work = Task { try await body() }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            outcome.settle(continuation, with: .failure(TestFailure("timed out after \(timeout)s waiting for \(what)")))
            work.cancel()
        }
        Task {
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
