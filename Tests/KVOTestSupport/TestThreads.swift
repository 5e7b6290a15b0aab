import Foundation

/// Threads of the test process's own for tests (see ``DedicatedThreadTrait``):
/// an executor that runs each job on an idle thread of its own, and starts
/// one more thread when none is idle, so that no job waits behind a thread
/// that blocks.
///
/// @unchecked Sendable: `jobs` and `idle` are only touched with `condition`'s lock held.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// The one pool of the test process.
    public static let shared = TestThreads()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// Threads waiting for a job.
    private var idle = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            if jobs.count > idle { startThread() } else { condition.signal() }
        }
    }

    private func startThread() {
        let thread = Thread { [self] in work() }
        thread.name = "KVOTestSupport.TestThreads"
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            guard !jobs.isEmpty else {
                idle += 1
                condition.wait()
                idle -= 1
                continue
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }
}
