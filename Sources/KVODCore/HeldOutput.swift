/// A connection's output that tells of changes not yet on disk: with group
/// commit (`--sync batch`), what a client is sent after a change waits until the
/// batch holding that change is committed, so no client hears of a change a
/// crash could lose (docs/DURABILITY.md). Held per batch, oldest first, and
/// released in one piece once its batch and every earlier one committed.
public struct HeldOutput: Sendable {
    private var batches: [(batch: UInt64, bytes: [UInt8], since: UInt64)] = []
    /// How many bytes are held: output waiting, as the socket's queue is.
    public private(set) var byteCount = 0

    public init() {}

    public var isEmpty: Bool { batches.isEmpty }

    /// When (loop ms) the oldest output held now was held (`info`'s `storage.heldOutputOldestMs`).
    public var oldestSince: UInt64? { batches.first?.since }

    /// Holds `bytes` until `batch` commits; `now` in loop ms. Returns whether
    /// nothing was held before (the daemon lists the connections that hold).
    public mutating func hold(_ bytes: UnsafeRawBufferPointer, until batch: UInt64, now: UInt64) -> Bool {
        let wasEmpty = batches.isEmpty
        byteCount += bytes.count
        if batches.last?.batch == batch {
            batches[batches.count - 1].bytes.append(contentsOf: bytes)
        } else {
            batches.append((batch, Array(bytes), now))
        }
        return wasEmpty
    }

    /// The bytes held for batches up to `committed`, in order, as one array,
    /// and no longer held; nil when none is.
    public mutating func release(upTo committed: UInt64) -> [UInt8]? {
        let ready = batches.prefix { $0.batch <= committed }
        guard !ready.isEmpty else { return nil }
        batches.removeFirst(ready.count)
        let bytes = ready.count == 1 ? ready.first!.bytes : ready.flatMap(\.bytes)
        byteCount -= bytes.count
        return bytes
    }

    /// Drops everything held (a connection closed at once).
    public mutating func discard() {
        batches = []
        byteCount = 0
    }
}
