import Dispatch
import Foundation
import KVOClient
import Synchronization

/// `set --hold`: keeps the connection, and so its ephemeral values, open
/// until SIGINT or SIGTERM. If the connection is lost meanwhile (kvod
/// stopped), the values are gone and kvoctl says so (status 3).
enum Hold {
    static func untilInterrupted(_ connection: KVOConnection, watching object: String, _ keyPath: String?)
        async throws(KVOClientError)
    {
        // A stream of the held value ends with an error when the connection is lost.
        let stream = keyPath.map { connection.changes(of: object, keyPaths: [$0], options: []) }
            ?? connection.changes(of: object, options: [])
        let outcome = await withTaskGroup(of: KVOClientError?.self) { group in
            group.addTask { await interrupted(); return nil }
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

    /// Returns at the first SIGINT or SIGTERM (both taken from their default action, which would
    /// end kvoctl with a signal status instead of 0).
    private static func interrupted() async {
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: .global())
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            for source in sources {
                source.setEventHandler { if once.claim() { continuation.resume() } }
                source.resume()
            }
        }
        for source in sources { source.cancel() }
    }
}

/// True for the first caller only, from any thread.
private final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)
    func claim() -> Bool { claimed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged }
}
