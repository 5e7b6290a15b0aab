import Foundation
import KVOEngine
import KVOTestSupport

/// Writers on threads of their own, one per socket: the i-th sets `o.w<i>` to
/// 1, 2, … `count`, one at a time, trying a write again while kvod answers
/// `unavailable` (etcd electing a leader), and keeps each acknowledged seq.
///
/// @unchecked Sendable: `acknowledged`, `failures` and `finished` are only
/// touched with `lock` held.
final class ClusterWriters: @unchecked Sendable {
    let count: Int
    private let lock = NSLock()
    private var acknowledged: [[Int]]
    private var failures: [String] = []
    private var finished = 0
    /// `unavailable` answers, all writers together.
    private var refusals = 0

    init(sockets: [String], count: Int) {
        self.count = count
        acknowledged = Array(repeating: [], count: sockets.count)
        for (index, socket) in sockets.enumerated() {
            Thread.detachNewThread { [self] in
                do {
                    try write(index, through: LineClient(path: socket))
                } catch {
                    lock.withLock { failures.append("writer \(index): \(error)") }
                }
                lock.withLock { finished += 1 }
            }
        }
    }

    private func write(_ index: Int, through client: LineClient) throws {
        for value in 1...count {
            try waitUntil("writer \(index)'s write of \(value) is acknowledged", timeout: 60, recheckEvery: 0.05) {
                let reply = try client.request(#"{"op":"set","object":"o","keyPath":"w\#(index)","value":\#(value)}"#,
                                               timeout: 30).reply
                if reply["error"]?["code"] == "unavailable" {
                    lock.withLock { refusals += 1 }
                    return false
                }
                guard reply["ok"] == true, let seq = reply["seq"]?.intValue else {
                    throw TestFailure("writer \(index)'s write of \(value): \(reply)")
                }
                lock.withLock { acknowledged[index].append(seq) }
                return true
            }
        }
    }

    /// Each writer's acknowledged seqs so far, in the order acknowledged.
    var seqs: [[Int]] { lock.withLock { acknowledged } }
    var isFinished: Bool { lock.withLock { finished == acknowledged.count } }
    var errors: [String] { lock.withLock { failures } }
    var unavailableAnswers: Int { lock.withLock { refusals } }
}
