import Foundation
import KVOEngine
import KVOTestSupport

/// A writer on a thread of its own that inserts distinct numbers into
/// `<object>.items`, `group` pipelined inserts at a time (each group one
/// connection's pipelined changes, one `Txn`), and never sends a value
/// twice: a refused insert is not tried again, so every value's outcome is
/// its one request's, and the array tells whether any was applied twice.
///
/// @unchecked Sendable: `sent`, `outcomes`, `failure`, `stopping` and
/// `finished` are only touched with `lock` held.
final class InsertWriter: @unchecked Sendable {
    /// What became of one insert.
    enum Outcome: Equatable {
        /// `ok` at this seq.
        case acknowledged(Int)
        /// `unavailable` saying that nothing changed.
        case refused
        /// `unavailable` that may have been applied.
        case unknown
    }

    let object: String
    private let lock = NSLock()
    private var sent: [Int: Date] = [:]
    private var outcomes: [Int: (outcome: Outcome, at: Date)] = [:]
    private var failure: String?
    private var stopping = false
    private var finished = false

    /// Starts writing through the kvod at `socket`, values from `first` up.
    init(socket: String, object: String, first: Int, group: Int = 4) {
        self.object = object
        Thread.detachNewThread { [self] in
            do {
                try write(through: LineClient(path: socket), from: first, group: group)
            } catch {
                lock.withLock { failure = "\(object): \(error)" }
            }
            lock.withLock { finished = true }
            WaitSignal.shared.notify()
        }
    }

    private func write(through client: LineClient, from first: Int, group: Int) throws {
        var next = first
        while !lock.withLock({ stopping }) {
            let values = next..<(next + group)
            next += group
            let now = Date()
            lock.withLock { for value in values { sent[value] = now } }
            for value in values {
                try client.send(#"{"id":\#(value),"op":"insert","object":"\#(object)","keyPath":"items","value":\#(value)}"#)
            }
            for _ in values {
                let reply = try client.readJSON(timeout: 30)
                guard let value = reply["id"]?.intValue, values.contains(value) else {
                    throw TestFailure("not a reply to \(values): \(reply)")
                }
                let outcome: Outcome
                if reply["ok"] == true, let seq = reply["seq"]?.intValue {
                    outcome = .acknowledged(seq)
                } else if reply["error"]?["code"] == "unavailable" {
                    let message = reply["error"]?["message"]?.stringValue ?? ""
                    outcome = message.contains("nothing changed") ? .refused : .unknown
                } else {
                    throw TestFailure("insert of \(value): \(reply)")
                }
                lock.withLock { outcomes[value] = (outcome, Date()) }
            }
            WaitSignal.shared.notify()
            // A kvod that refuses is stale: rather than spin on refusals, wait until it reads fresh.
            if lock.withLock({ values.allSatisfy { outcomes[$0]?.outcome == .refused } }) {
                try waitUntil("\(object)'s kvod reads fresh", timeout: 30, recheckEvery: 0.01) {
                    try client.request(#"{"op":"get","object":"\#(object)"}"#).reply["stale"] == nil
                }
            }
        }
    }

    /// Asks the writer to stop after the group in flight.
    func stop() { lock.withLock { stopping = true } }

    var isFinished: Bool { lock.withLock { finished } }
    var error: String? { lock.withLock { failure } }

    /// Each value sent so far and what became of it (nil: no reply yet).
    var results: [Int: Outcome?] {
        lock.withLock { sent.keys.reduce(into: [:]) { $0[$1] = outcomes[$1]?.outcome } }
    }

    var acknowledgedCount: Int {
        lock.withLock { outcomes.values.count { if case .acknowledged = $0.outcome { true } else { false } } }
    }

    /// When the first insert sent at or after `instant` was acknowledged.
    func firstAcknowledged(sentAfter instant: Date) -> Date? {
        lock.withLock {
            outcomes.compactMap { value, result -> Date? in
                guard case .acknowledged = result.outcome, let sentAt = sent[value], sentAt >= instant else { return nil }
                return result.at
            }.min()
        }
    }
}
