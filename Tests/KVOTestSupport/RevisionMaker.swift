/// Many etcd revisions through a kvod over etcd, fast: for tests that need a
/// long history (a start replay that takes seconds to apply).
public enum RevisionMaker {
    /// Sets through 16 connections at once until `count` changes are made,
    /// each its own `Txn` and revision (one connection's would share one), to
    /// `o0`…`o15`'s key path `n`; the last seq.
    public static func makeRevisions(_ count: Int, through socket: String) throws -> Int {
        let clients = try (0..<16).map { _ in try LineClient(path: socket) }
        var last = 0
        for round in 0..<(count / clients.count) {
            for (index, client) in clients.enumerated() {
                try client.send(#"{"op":"set","object":"o\#(index)","keyPath":"n","value":\#(round)}"#)
            }
            for client in clients {
                let reply = try client.readJSON(timeout: 30)
                guard reply["ok"] == true, let seq = reply["seq"]?.intValue else { throw TestFailure("\(reply)") }
                last = max(last, seq)
            }
        }
        return last
    }
}
