/// How many connections each uid holds, against `--max-connections-per-uid`,
/// so that one user cannot take every connection kvod serves.
///
/// Root and kvod's own uid are not limited: they can stop kvod anyway, and a
/// kvod that one user runs for itself would otherwise serve that user only
/// part of its connections.
struct ConnectionsPerUID {
    /// The most connections one (limited) uid may hold.
    let limit: Int
    private let exempt: Set<UInt32>
    private var counts: [UInt32: Int] = [:]

    init(limit: Int, exempt: Set<UInt32>) {
        self.limit = limit
        self.exempt = exempt
    }

    /// `--max-connections-per-uid`'s default: half of all connections.
    static func defaultLimit(maxConnections: Int) -> Int {
        max(1, maxConnections / 2)
    }

    /// How many connections `uid` holds.
    func count(of uid: UInt32) -> Int { counts[uid, default: 0] }

    /// Whether one more connection of `uid` may be served.
    func admits(_ uid: UInt32) -> Bool {
        exempt.contains(uid) || count(of: uid) < limit
    }

    mutating func opened(by uid: UInt32) {
        counts[uid, default: 0] += 1
    }

    mutating func closed(by uid: UInt32) {
        guard let count = counts[uid] else { return }
        counts[uid] = count > 1 ? count - 1 : nil
    }
}
