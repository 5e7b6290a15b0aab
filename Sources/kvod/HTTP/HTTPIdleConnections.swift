import KVOEngine

/// The connections of answered HTTP requests kept for the next request of
/// the same subject, so that a request does not make and close a connection
/// and an engine client of its own: at most ``capacity`` of them (the oldest
/// closes when one more comes), each holding no more than a new connection
/// does but its output buffer, which keeps its capacity only while it is
/// small (``ConnectionState``'s `smallOutputBytes`).
/// The daemon counts none of them among its connections, its uids'
/// connections or the engine's clients (``Daemon/setAside(_:)``). Loop-confined.
struct HTTPIdleConnections {
    /// A connection set aside and the exchange that is its stream.
    struct Idle {
        let exchange: HTTPExchange
        let connection: ClientConnection
    }

    /// The most connections kept: more than one client's requests in flight
    /// at once, few enough that what they keep does not count.
    static let capacity = 16

    /// Newest last: the one taken next, whose memory was touched last.
    private var idle: [Idle] = []

    /// Takes the newest kept for `credentials`, if any.
    mutating func take(for credentials: PeerCredentials) -> Idle? {
        guard let index = idle.lastIndex(where: { $0.connection.controller.credentials == credentials }) else {
            return nil
        }
        return idle.remove(at: index)
    }

    /// Keeps `entry`; when that is one too many, hands back the oldest kept, to be closed.
    mutating func keep(_ entry: Idle) -> Idle? {
        idle.append(entry)
        guard idle.count > Self.capacity else { return nil }
        return idle.removeFirst()
    }

    /// Hands every one over and keeps none (kvod is stopping, or the tokens were reloaded).
    mutating func takeAll() -> [Idle] {
        defer { idle = [] }
        return idle
    }
}
