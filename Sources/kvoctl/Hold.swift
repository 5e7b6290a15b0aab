import Dispatch
import Foundation
import KVOClient

/// `set --hold`: keeps the connection, and so its ephemeral values, open
/// until SIGINT or SIGTERM. If the connection is lost meanwhile (kvod
/// stopped), the values are gone and kvoctl says so (status 3).
enum Hold {
    static func untilInterrupted(_ interrupt: InterruptSignal, _ connection: KVOConnection,
                                 watching object: String, _ keyPath: String?) async throws(KVOClientError) {
        // A stream of the held value ends with an error when the connection is lost.
        let stream = keyPath.map { connection.changes(of: object, keyPaths: [$0], options: []) }
            ?? connection.changes(of: object, options: [])
        let outcome = await withTaskGroup(of: KVOClientError?.self) { group in
            group.addTask { await interrupt.wait(); return nil }
            group.addTask {
                do throws(KVOClientError) {
                    for try await _ in stream {}
                    return nil
                } catch {
                    return error
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let outcome { throw outcome }
    }
}

/// SIGINT and SIGTERM taken from their default action (which would end kvoctl
/// with a signal status instead of 0) from the moment it is made, so that a
/// signal sent while the set is still on its way is not lost.
///
/// @unchecked Sendable: `arrived` and `waiter` are only touched with `lock` held.
final class InterruptSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var arrived = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var sources: [DispatchSourceSignal] = []

    init() {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.fire() }
            source.resume()
            return source
        }
    }

    deinit { for source in sources { source.cancel() } }

    private func fire() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            arrived = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    /// Returns at the first SIGINT or SIGTERM since this was made (at once if one came already).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = lock.withLock {
                if !arrived { waiter = continuation }
                return arrived
            }
            if already { continuation.resume() }
        }
    }
}
