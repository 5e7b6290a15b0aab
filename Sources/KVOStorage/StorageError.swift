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

    /// No room on the disk for what `description` says, found before anything was written.
    init(full description: String) {
        self.description = description
        isFull = true
    }

    /// `retryable`: false when SQLite may have written part of it (then a full disk is no different from any failure).
    init(_ context: String, _ error: SQLiteError, retryable: Bool = true) {
        self.description = "\(context): \(error)"
        isFull = retryable && error.isFull
    }

    /// `error` as a storage error: one already is as it is, another under `context`.
    init(_ context: String, wrapping error: any Error) {
        switch error {
        case let storage as StorageError: self = storage
        case let sqlite as SQLiteError: self.init(context, sqlite)
        default: self.init("\(context): \(error)")
        }
    }
}
