/// Why kvod cannot use its data directory, in words for the operator.
public struct StorageError: Error, CustomStringConvertible {
    public let description: String
    /// SQLite found no room on the disk (`SQLITE_FULL`) and wrote nothing: the
    /// same write may be tried again once there is room (docs/DURABILITY.md, "A full disk").
    public let isFull: Bool

    init(_ description: String) {
        self.description = description
        isFull = false
    }

    /// `retryable`: false when SQLite may have written part of it (then a full disk is no different from any failure).
    init(_ context: String, _ error: SQLiteError, retryable: Bool = true) {
        self.description = "\(context): \(error)"
        isFull = retryable && error.isFull
    }
}
