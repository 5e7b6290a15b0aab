import Dispatch
import Testing

/// Runs each test of a suite on a thread of its own instead of Swift
/// Concurrency's cooperative pool.
///
/// The pool has one thread per core (two on CI). A synchronous test that
/// loops on sockets for seconds holds one of them, and two such tests stall
/// every async test of the other suites (the client tests wait with 20-second
/// deadlines). With this trait the test still runs in its own task, so
/// `#expect` and `Issue.record` are attributed as usual.
struct DedicatedThreadTrait: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(DispatchQueueExecutor(label: "kvodTests.\(test.name)")) {
            try await function()
        }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// Each test runs on a thread of its own (see ``DedicatedThreadTrait``).
    static var onDedicatedThread: Self { Self() }
}

/// A task executor that runs jobs on one serial dispatch queue, which gets a
/// thread of its own when its job blocks.
final class DispatchQueueExecutor: TaskExecutor {
    private let queue: DispatchQueue
    /// Set on the queue: the label of the executor code runs on, if any.
    static let labelKey = DispatchSpecificKey<String>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.labelKey, value: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
