/// What each client must see of its own kvod, over etcd (docs/CLUSTER.md,
/// "Read-your-writes", "A kvod just started"): a `get` reflects at least the
/// seq of every write the client had an answer for, and a later `get` never
/// an older seq than an earlier one (a kvod's replica only moves forward, and
/// a restarted kvod starts where etcd was). A read that says `stale` is
/// exempt: a kvod cut off while it replayed its start listens behind, and says so.
enum SessionCheck {
    static func violations(_ operations: [RecordedOperation]) -> [String] {
        var found: [String] = []
        for client in Set(operations.map(\.client)).sorted() {
            let own = operations.filter { $0.client == client }
            let answeredWrites = own.filter { !$0.isRead && $0.returned != nil && $0.seq != nil }
                .sorted { $0.returned! < $1.returned! }
            var nextWrite = 0
            var written = 0
            var lastRead = 0
            for read in own.filter({ $0.isRead && !$0.outcome.isStale }).sorted(by: { $0.call < $1.call }) {
                guard let seq = read.seq else { continue }
                while nextWrite < answeredWrites.count, answeredWrites[nextWrite].returned! <= read.call {
                    written = max(written, answeredWrites[nextWrite].seq!)
                    nextWrite += 1
                }
                if seq < written {
                    found.append("client \(client): \(read.request) answered at seq \(seq), after its own write at seq \(written)")
                }
                if seq < lastRead {
                    found.append("client \(client): \(read.request) answered at seq \(seq), after a read at seq \(lastRead)")
                }
                lastRead = max(lastRead, seq)
            }
        }
        return found
    }
}
