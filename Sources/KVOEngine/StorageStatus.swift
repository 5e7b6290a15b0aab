/// The data directory's room to write, as the storage writer last saw it
/// (`--data-dir` only): `info`'s `storage`, and whether a write is refused
/// with `storage_full` before anything is applied (docs/DURABILITY.md, "A
/// full disk"). The daemon keeps it up to date; the engine only reads it.
public struct StorageStatus: Sendable, Equatable {
    /// Writes that add data are refused: less than the reserve is free, the
    /// reserve was given up, or changes wait for space.
    public var full = false
    /// When it last became full (ISO 8601, UTC); nil while it is not.
    public var since: String?
    /// What kvod may still write: free bytes on the data directory's
    /// filesystem (for kvod's user) and free pages inside its database.
    public var availableBytes = 0
    /// `--storage-reserve`: the bytes kvod keeps in its reserve file.
    public var reserveBytes = 0
    /// Whether kvod holds its reserve now (it gives it up to finish a commit that found the disk full).
    public var reserveHeld = true
    /// Changes made in memory that a commit could not write even after the
    /// reserve was given up: they, their replies and all output made after
    /// them (`info`'s too) wait until there is room. Meanwhile deletes are
    /// refused too. The log and systemd's status line say it.
    public var waitingChanges = 0

    public init(full: Bool = false, since: String? = nil, availableBytes: Int = 0, reserveBytes: Int = 0,
                reserveHeld: Bool = true, waitingChanges: Int = 0) {
        self.full = full
        self.since = since
        self.availableBytes = availableBytes
        self.reserveBytes = reserveBytes
        self.reserveHeld = reserveHeld
        self.waitingChanges = waitingChanges
    }
}
