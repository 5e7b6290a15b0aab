/// How a server keeps what it is told, for the durability scenario: each
/// case pairs a kvod `--sync` mode with the Redis AOF setting that promises
/// the same after a power failure (docs/DURABILITY.md).
enum Persistence: String, CaseIterable, Sendable, Hashable {
    /// kvod without `--data-dir`; Redis `--appendonly no`. A restart loses everything.
    case none
    /// kvod `--sync batch`; Redis `appendfsync everysec`: a power failure
    /// loses the last interval (kvod's 100 ms, Redis's second).
    case batch
    /// kvod `--sync always`; Redis `appendfsync always`: nothing
    /// acknowledged is lost, each group of changes synced before its replies.
    case always

    /// kvod's arguments, its data directory in `directory` (a fresh one per measurement).
    func kvodArguments(directory: String) -> [String] {
        switch self {
        case .none: []
        case .batch, .always: ["--data-dir", directory + "/data", "--sync", rawValue]
        }
    }

    /// redis-server's arguments; its AOF goes into `--dir`, the measurement's fresh directory.
    var redisArguments: [String] {
        switch self {
        case .none: ["--appendonly", "no"]
        case .batch: ["--appendonly", "yes", "--appendfsync", "everysec"]
        case .always: ["--appendonly", "yes", "--appendfsync", "always"]
        }
    }

    /// The pair, as the tables name it.
    var pairName: String {
        switch self {
        case .none: "in memory / no persistence"
        case .batch: "`--sync batch` / `appendfsync everysec`"
        case .always: "`--sync always` / `appendfsync always`"
        }
    }

    /// One side of the pair, as the tables name it.
    func name(for peer: Peer) -> String {
        switch (self, peer) {
        case (.none, .kvod): "kvod in memory"
        case (.none, .redis): "Redis, no persistence"
        case (_, .kvod): "kvod `--sync \(rawValue)`"
        case (.batch, .redis): "Redis `appendfsync everysec`"
        case (.always, .redis): "Redis `appendfsync always`"
        case (_, .etcd): "etcd"
        }
    }
}
