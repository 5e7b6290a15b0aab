import Foundation
import KVOTestSupport

/// How long kvod's one loop is held, seen from outside: a thread of its own
/// sends a `ping` on a connection of its own as soon as the previous one is
/// answered. A request that keeps the loop busy for t delays the ping in
/// flight by up to t, so the longest round trip over a request bounds how
/// long that request held every other client. On a loaded machine the
/// round trip also counts the time kvod waited for a core, so the probe also
/// reads the loop thread's own CPU time over the request (kvod's main thread,
/// /proc/PID/task/PID/schedstat): a hold is the smaller of the two, and a
/// request that really holds the loop long is long by both.
///
/// @unchecked Sendable: the client is used by the probe's thread only; the
/// figures are read and written with `lock` held.
final class PingProbe: @unchecked Sendable {
    private let client: LineClient
    private let loopThreadSchedstat: String
    private let lock = NSLock()
    private var longest: Duration = .zero
    private var completed = 0
    private var failure: (any Error)?
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled by ``stop()``: the thread waits on it between pings.
    private let stopRequested = DispatchSemaphore(value: 0)

    /// Probes the kvod listening at `socketPath` whose process is `pid`.
    init(socketPath: String, pid: Int32) throws {
        client = try LineClient(path: socketPath)
        loopThreadSchedstat = "/proc/\(pid)/task/\(pid)/schedstat"
        Thread { [self] in run() }.start()
    }

    deinit { stop() }

    /// Runs `body` and returns how long it held kvod's loop: the longest round
    /// trip of the pings sent meanwhile (also the one that overlapped its
    /// start, and one sent after it ended, which waits for anything `body`
    /// left kvod busy with), or the loop thread's CPU time over all of that
    /// if it is shorter.
    func loopHold(during body: () throws -> Void) throws -> Duration {
        lock.withLock { longest = .zero }
        let cpuBefore = try loopThreadCPU()
        try body()
        let after = lock.withLock { completed }
        // Two more: the one in flight when `body` ended, and one sent after.
        try waitUntil("two pings answered after the request", timeout: 30) {
            try lock.withLock {
                if let failure { throw failure }
                return completed >= after + 2
            }
        }
        let cpu = try loopThreadCPU() - cpuBefore
        return min(lock.withLock { longest }, cpu)
    }

    /// The loop thread's time on a CPU so far (schedstat's first field, in ns).
    private func loopThreadCPU() throws -> Duration {
        let text = try String(contentsOfFile: loopThreadSchedstat, encoding: .utf8)
        guard let field = text.split(separator: " ").first, let nanoseconds = Int64(field) else {
            throw TestFailure("odd \(loopThreadSchedstat): \(text)")
        }
        return .nanoseconds(nanoseconds)
    }

    /// How long a request may hold the loop: `budget`; or, on a machine so
    /// loaded that the same request against a small state (`reference`)
    /// already holds it more than half of that, twice the reference. A
    /// request whose cost grows with the state, not with itself, exceeds both.
    /// Under a sanitizer the budget is four times as long: every request is
    /// several times slower there, and the plain run holds the real budget.
    static func allowance(_ budget: Duration, reference: Duration) -> Duration {
        max(TestEnvironment.sanitizer == nil ? budget : budget * 4, reference * 2)
    }

    /// Ends the probe's thread (after its ping in flight).
    func stop() {
        let wasRunning = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        if wasRunning {
            stopRequested.signal()
            finished.wait()
        }
    }

    private func run() {
        defer { finished.signal() }
        let clock = ContinuousClock()
        while !lock.withLock({ stopped }) {
            do {
                let start = clock.now
                try client.send(#"{"op":"ping"}"#)
                _ = try client.readJSON(timeout: 30)
                let roundTrip = clock.now - start
                lock.withLock {
                    longest = max(longest, roundTrip)
                    completed += 1
                }
                // The next ping a millisecond on, unless stopped meanwhile:
                // fine enough, and it leaves kvod the CPU.
                if stopRequested.wait(timeout: .now() + .milliseconds(1)) == .success { return }
            } catch {
                lock.withLock { failure = error }
                return
            }
        }
    }
}
