@testable import KVOStorage

/// Shorthands only the tests use.
extension SQLiteStatement {
    /// Binds bytes as a blob.
    func bind(_ index: Int32, blob bytes: [UInt8]) {
        bytes.withUnsafeBytes { bind(index, blob: $0) }
    }
}

extension HistoryBatchEncoder {
    /// The blob so far (a copy).
    var bytes: [UInt8] { withBytes { Array($0) } }
}
