/// When a committed change is forced to the disk (`--sync`). In every mode a
/// change is written to the operating system before its reply leaves, so a
/// crash of kvod alone loses nothing acknowledged; the modes differ in what
/// a power failure or kernel crash can lose (docs/DURABILITY.md).
public enum SyncMode: String, Sendable, CaseIterable {
    /// fsync before the reply: each group commit is one WAL sync. Loses nothing acknowledged.
    case always
    /// fsync at a short interval (``StorageWriter/batchInterval``): loses at most that much.
    case batch
    /// Never fsync; the OS writes back when it likes (Linux: within about 30 s).
    case off

    /// The `PRAGMA synchronous` value for a WAL database in this mode.
    var synchronousPragma: String {
        switch self {
        // The WAL is synced after each commit by the writer's CommitSyncer,
        // so that the next group is written while the last one syncs.
        case .always: "NORMAL"
        case .batch: "NORMAL"
        case .off: "OFF"
        }
    }
}
