import Dispatch
import Foundation
import KVOClient
import Synchronization

/// `set --hold`: keeps the connection, and so its ephemeral values, open
/// until SIGINT or SIGTERM. If the connection is lost meanwhile (kvod
/// stopped), the values are gone and kvoctl says so (status 3).
enum Hold {
    static func untilInterrupted(_ connection: KVOConnection, watching object: String, _ keyPath: String?,
                                 _ interruption: Interruption) async throws(KVOClientError) {
        // A stream of the held value ends with an error when the connection is lost.
        let stream = keyPath.map { connection.changes(of: object, keyPaths: [$0], options: []) }
            ?? connection.changes(of: object, options: [])
        let outcome = await withTaskGroup(of: KVOClientError?.self) { group in
            group.addTask { await interruption.wait(); return nil }
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

    /// The first SIGINT or SIGTERM, both taken from their default action (which would end kvoctl
    /// with a signal status instead of 0) and watched as soon as this is made: before the set, so
    /// that a signal that comes just after it is not missed.
    ///
    /// @unchecked Sendable: `sources` is set once in `init`; the rest is in a Mutex.
    final class Interruption: @unchecked Sendable {
        private struct State {
            /// A signal came, or the waiting task was cancelled (the connection was lost first).
            var isOver = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let state = Mutex(State())
        private var sources: [any DispatchSourceSignal] = []

        init() {
            sources = [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [weak self] in self?.end() }
                source.resume()
                return source
            }
        }

        deinit {
            for source in sources { source.cancel() }
        }

        /// Returns at the first SIGINT or SIGTERM since ``init()``, or when the waiting task is
        /// cancelled (the held connection was lost: its task group would otherwise wait here).
        func wait() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        if state.isOver { return true }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: { end() }
        }

        /// Lets the waiting task, and any later ``wait()``, return: at a signal, or at the waiter's cancellation.
        private func end() {
            let waiter = state.withLock { state in
                state.isOver = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
