import KVOValues

/// Growable bytes whose append costs its copy and little more: a client's
/// output, and the events being encoded for it.
///
/// `[UInt8].append(contentsOf:)` pays for uniqueness, capacity and a generic
/// sequence copy whatever it copies, and a `set` appends a dozen times, fan-out
/// once per event (docs/PERFORMANCE.md, "What each change bought"). Here an
/// append is a uniqueness and a capacity check, then `memcpy`.
///
/// A value, like `[UInt8]`: copies share the storage until one of them changes.
public struct GrowableBytes: RandomAccessCollection {
    /// Its fields are unchecked for exclusive access: visible to other modules
    /// (``unsafeBytes`` is inlined there), they would be checked on every use.
    @usableFromInline final class Storage {
        @exclusivity(unchecked) @usableFromInline var base: UnsafeMutableRawPointer?
        @exclusivity(unchecked) var capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            base = capacity > 0 ? UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1) : nil
        }

        deinit { base?.deallocate() }
    }

    @usableFromInline private(set) var storage: Storage
    /// How many bytes the buffer holds.
    public private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        storage = Storage(capacity: capacity)
    }

    /// How many bytes the buffer can hold before it grows.
    public var capacity: Int { storage.capacity }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "GrowableBytes index out of range")
        return storage.base!.load(fromByteOffset: position, as: UInt8.self)
    }

    /// The bytes, without a reference to count: valid only while the buffer
    /// is neither changed nor released (a loop that reads one buffer while it
    /// appends to others, a client's output handed to its socket;
    /// `withUnsafeBytes` on a class's property retained it).
    @inlinable package var unsafeBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.base, count: count)
    }

    /// Calls `body` with the bytes, valid only during the call.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.base, count: count))
    }

    public func withContiguousStorageIfAvailable<R>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R? {
        try withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    /// Appends `bytes`.
    @inline(__always)
    public mutating func append(bytes: UnsafeRawBufferPointer) {
        let added = bytes.count
        guard added > 0 else { return }
        makeRoom(for: added)
        storage.base!.advanced(by: count).copyMemory(from: bytes.baseAddress!, byteCount: added)
        count += added
    }

    /// One capacity check for the three parts; all 24 bytes of the words
    /// stored (no `memcpy`), `count` of them kept.
    @inline(__always)
    @usableFromInline package mutating func append(_ lead: StaticString, words: (UInt64, UInt64, UInt64), count added: Int,
                         _ trail: StaticString) {
        makeRoom(for: lead.utf8CodeUnitCount + 24 + trail.utf8CodeUnitCount)
        var target = storage.base!.advanced(by: count)
        target.copyMemory(from: lead.utf8Start, byteCount: lead.utf8CodeUnitCount)
        target += lead.utf8CodeUnitCount
        target.storeBytes(of: words.0.littleEndian, toByteOffset: 0, as: UInt64.self)
        target.storeBytes(of: words.1.littleEndian, toByteOffset: 8, as: UInt64.self)
        target.storeBytes(of: words.2.littleEndian, toByteOffset: 16, as: UInt64.self)
        (target + added).copyMemory(from: trail.utf8Start, byteCount: trail.utf8CodeUnitCount)
        count += lead.utf8CodeUnitCount + added + trail.utf8CodeUnitCount
    }

    /// Appends one byte.
    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        makeRoom(for: 1)
        storage.base!.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Appends the bytes of `array`.
    @inline(__always)
    public mutating func append(contentsOf array: [UInt8]) {
        array.withUnsafeBytes { append(bytes: $0) }
    }

    /// Removes the last `count` bytes (an event's end, to splice fields in
    /// before it). The storage stays; the next append copies it if it is shared.
    mutating func removeLast(_ removed: Int) {
        precondition(removed >= 0 && removed <= count, "GrowableBytes: cannot remove \(removed) of \(count) bytes")
        count -= removed
    }

    /// Empties the buffer; with `keepingCapacity`, its storage stays for the next bytes.
    public mutating func removeAll(keepingCapacity: Bool = false) {
        if keepingCapacity && isKnownUniquelyReferenced(&storage) {
            count = 0
        } else {
            self = GrowableBytes()
        }
    }

    @inline(__always)
    private mutating func makeRoom(for added: Int) {
        if _slowPath(!isKnownUniquelyReferenced(&storage) || storage.capacity - count < added) {
            grow(toHold: count + added)
        }
    }

    /// A storage of its own, at least twice as large as needed so that
    /// appends stay amortized constant.
    private mutating func grow(toHold needed: Int) {
        let capacity = isKnownUniquelyReferenced(&storage) ? Swift.max(needed, storage.capacity * 2, 64) : Swift.max(needed, 64)
        let grown = Storage(capacity: capacity)
        if count > 0 { grown.base!.copyMemory(from: storage.base!, byteCount: count) }
        storage = grown
    }
}

extension GrowableBytes: Equatable {
    public static func == (lhs: GrowableBytes, rhs: GrowableBytes) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }
}

extension GrowableBytes: ByteSink {}
