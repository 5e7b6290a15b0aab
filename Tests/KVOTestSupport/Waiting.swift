import Foundation
import Glibc

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` seconds pass (then throws).
public func waitUntil(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() > deadline { throw TestFailure("timed out after \(timeout)s waiting until \(what)") }
        usleep(5_000)
    }
}

/// Polls an async `condition` until it holds or `timeout` seconds pass (then throws).
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
