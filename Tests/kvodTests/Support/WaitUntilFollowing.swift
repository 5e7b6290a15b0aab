import KVOTestSupport

/// Waits until each kvod's watch is in place (its reads are not stale): before, its changes are `unavailable`.
func waitUntilFollowing(_ sockets: [String]) throws {
    for socket in sockets {
        let client = try LineClient(path: socket)
        try waitUntil("the kvod at \(socket) follows etcd", timeout: 20) {
            let reply = try client.request(#"{"op":"get","object":"-"}"#).reply
            return reply["stale"] == nil && reply["error"]?["stale"] == nil
        }
    }
}
