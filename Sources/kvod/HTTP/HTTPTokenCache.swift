import KVOEngine

/// The tokens that passed most recently, each with who it acts as: a token
/// sent again (every request of a keep-alive connection carries it) is found
/// by its bytes, without its SHA-256 again. At most ``capacity`` tokens of at
/// most ``maxTokenBytes`` each; a reloaded tokens file starts an empty one.
struct HTTPTokenCache {
    typealias Caller = (subject: String, credentials: PeerCredentials)

    static let capacity = 8
    static let maxTokenBytes = 512

    private var entries: [(token: [UInt8], caller: Caller)] = []
    /// The entry the next token replaces once the cache is full.
    private var nextReplaced = 0

    /// Who `token` acts as, if it passed recently. Each cached token of the
    /// same length is compared whole, without an early exit, so the time a
    /// comparison takes tells nothing of a cached token's bytes.
    func caller(of token: Substring.UTF8View) -> Caller? {
        var found: Caller?
        for entry in entries where entry.token.count == token.count {
            var difference: UInt8 = 0
            for (cached, sent) in zip(entry.token, token) { difference |= cached ^ sent }
            if difference == 0 { found = entry.caller }
        }
        return found
    }

    /// Keeps `token`, which acts as `caller`, replacing the oldest kept one when full.
    mutating func remember(_ token: Substring.UTF8View, as caller: Caller) {
        guard token.count <= Self.maxTokenBytes else { return }
        let entry = (token: Array(token), caller: caller)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[nextReplaced] = entry
            nextReplaced = (nextReplaced + 1) % Self.capacity
        }
    }
}
