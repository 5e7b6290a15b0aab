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

/// The result of `body`, or a failure once `timeout` seconds pass.
public func withDeadline<T: Sendable>(_ what: String, seconds timeout: Double,
                                      _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw TestFailure("timed out after \(timeout)s waiting for \(what)")
        }
        return value
    }
}
