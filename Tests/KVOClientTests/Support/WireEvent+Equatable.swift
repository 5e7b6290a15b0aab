@testable import KVOClient

/// Events compared field by field, for LineScannerTests, which holds what the scanner reads to what the
/// full reader reads; KVOClient itself never compares two.
extension WireEvent: Equatable {
    // public, as Equatable asks of a conformance made outside the type's module.
    public static func == (a: WireEvent, b: WireEvent) -> Bool {
        (a.object, a.keyPath, a.kind, a.new, a.old, a.indexes) == (b.object, b.keyPath, b.kind, b.new, b.old, b.indexes)
            && (a.isPrior, a.isInitial, a.seq, a.changedKeyPath, a.prefix) == (b.isPrior, b.isInitial, b.seq, b.changedKeyPath, b.prefix)
            && (a.cause, a.coalesced) == (b.cause, b.coalesced)
    }
}
