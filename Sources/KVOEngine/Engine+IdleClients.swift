/// Clients set aside between requests: a door that serves each request as a
/// client of its own (HTTP) may keep a client that served one for the next
/// request of the same subject, instead of making and closing one per request.
/// A client set aside is no client: `info`'s `connections` does not count it.
extension Engine {
    /// Sets `client` aside, if nothing of its last request is left on it: no
    /// observation, output, held or waiting work, wait, lease or ephemeral
    /// value, ack, congestion, disconnection or close. Returns whether it was;
    /// a client that was not is closed as usual (``closeClient(_:)``).
    public func setAside(_ client: ClientController) -> Bool {
        guard client.isBlank, leaseTable.byOwner[client.id] == nil else { return false }
        clientCount -= 1
        return true
    }

    /// Serves a client set aside again: it counts among the clients again.
    /// Call it before anything else, ``closeClient(_:)`` included.
    public func takeBack(_ client: ClientController) {
        clientCount += 1
    }
}
