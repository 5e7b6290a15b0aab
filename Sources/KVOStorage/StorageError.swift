/// Why kvod cannot use its data directory, in words for the operator.
public struct StorageError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    init(_ context: String, _ error: SQLiteError) {
        self.description = "\(context): \(error)"
    }
}
