import Foundation

/// What the history clients of a run recorded, from any thread: every
/// operation, and the replies no operation explains (a `bad_request`), which fail the run.
///
/// @unchecked Sendable: its state is only touched with `lock` held.
final class HistoryLog: @unchecked Sendable {
    private let lock = NSCondition()
    private var operations: [RecordedOperation] = []
    /// Writes recorded so far: what a reading client waits on.
    private var writes = 0
    private var failures: [String] = []
    /// Operations recorded over the whole run, also those taken by ``take()``.
    private var total = 0
    private var stopped = false

    func append(_ operation: RecordedOperation) {
        lock.withLock {
            operations.append(operation)
            total += 1
            if !operation.isRead {
                writes += 1
                lock.broadcast()
            }
        }
    }

    /// Writes recorded so far.
    var writeCount: Int { lock.withLock { writes } }

    /// Blocks until more than `count` writes are recorded, the run stops, or `timeout` seconds pass:
    /// a reading client reads once per write, not as fast as its kvod answers.
    func waitForWrites(after count: Int, timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        lock.withLock {
            while writes <= count, !stopped, lock.wait(until: deadline) {}
        }
    }

    func fail(_ text: String) { lock.withLock { failures.append(text) } }

    /// Operations recorded so far in the whole run.
    var count: Int { lock.withLock { total } }

    var unexpected: [String] { lock.withLock { failures } }

    /// The operations recorded since the last call, which are forgotten here (a round's).
    func take() -> [RecordedOperation] {
        lock.withLock {
            defer { operations = [] }
            return operations
        }
    }

    /// Whether the clients are to stop after the operation they are making.
    var isStopping: Bool {
        get { lock.withLock { stopped } }
        set {
            lock.withLock {
                stopped = newValue
                lock.broadcast()
            }
        }
    }
}
