import Dispatch
import Foundation
import KVOClient
import KVOTestSupport

/// A writer that falls on a subscriber faster than it reads: another
/// connection sets `o.k` to "0-xxx…", "1-xxx…", … flat out, 3,000 sets of
/// about 1 KB (about 3 MB of events). Shared by the suites of subscribers that
/// fall behind (BoundedSubscriberTests, EveryChangeTests).
enum FlatOutSetter {
    static let sets = 3_000
    static let padding = String(repeating: "x", count: 1_000)

    static func run(against kvod: KVODProcess) async throws {
        let path = kvod.socketPath
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    let writer = try LineClient(path: path)
                    try writer.pipeline(count: sets, batch: 500) {
                        #"{"op":"set","object":"o","keyPath":"k","value":"\#($0)-\#(padding)"}"#
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Which set a change is: the number its value starts with.
    static func index(_ change: Change) -> Int? {
        guard case .string(let text)? = change.new else { return nil }
        return Int(text.prefix { $0 != "-" })
    }

    /// Once `connection` holds its one observation, pours the sets in while a
    /// subscriber is busy (it waits on `gate`), then lets it go on.
    static func pour(against kvod: KVODProcess, observedBy connection: KVOConnection,
                     whileBusy gate: DispatchSemaphore) async throws {
        try await waitUntil("kvod holds the observation", timeout: 10) {
            try await connection.observations().count == 1
        }
        try await run(against: kvod)
        try await connection.ping()
        gate.signal()
    }
}
