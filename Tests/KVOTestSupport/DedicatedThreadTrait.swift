import Foundation
import Testing

/// Runs each test of a suite on ``TestThreads`` instead of Swift
/// Concurrency's cooperative pool, at most ``width`` such tests at once.
///
/// The pool has one thread per core (two on CI), and a parallel run
/// (`swift test --parallel`) starts every test at once. A synchronous test
/// that loops on sockets for seconds holds a pool thread; two of them stall
/// every async test resumed behind them, which then missed its deadlines by
/// minutes, several in lockstep. So the suites of async tests and the
/// synchronous suites that block for long take this trait. The test still
/// runs in its own task, so `#expect` and `Issue.record` are attributed as usual.
public struct DedicatedThreadTrait: TestTrait, SuiteTrait, TestScoping {
    /// How many of these tests run at once: unbounded, every suite with this
    /// trait would start its kvods and etcd clusters the moment the run begins.
    public static let width = 8
    private static let gate = TestGate(width: width)

    public var isRecursive: Bool { true }

    /// True inside a test this trait already admitted: a test that takes the
    /// trait both itself and from its suite passes the gate once, not twice
    /// (twice, eight such tests waiting at once would hold every place and hang).
    @TaskLocal private static var admitted = false

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil, !Self.admitted else { return try await function() }
        await Self.gate.enter()
        defer { Self.gate.leave() }
        try await Self.$admitted.withValue(true) {
            try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
        }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// Each test runs on ``TestThreads`` (see ``DedicatedThreadTrait``).
    public static var onDedicatedThread: Self { Self() }
}

/// At most `width` holders at once; the others wait, suspended, in order.
///
/// @unchecked Sendable: `free` and `waiting` are only touched with `lock` held.
final class TestGate: @unchecked Sendable {
    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) { free = width }

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = lock.withLock {
                guard free > 0 else { waiting.append(continuation); return false }
                free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !waiting.isEmpty else { free += 1; return nil }
            return waiting.removeFirst()
        }
        next?.resume()
    }
}
