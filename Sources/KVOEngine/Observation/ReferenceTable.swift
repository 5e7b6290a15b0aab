/// What a ``ReferenceTable`` holds: a class instance that carries the key it
/// is found by.
protocol TableKeyed: AnyObject {
    associatedtype TableKey: Hashable
    var tableKey: TableKey { get }
    /// The slot a key's probe starts from, before masking: `hashValue`
    /// unless the key type knows a cheaper one that spreads as well.
    static func tableHash(_ key: TableKey) -> Int
}

extension TableKeyed {
    static func tableHash(_ key: TableKey) -> Int { key.hashValue }
}

extension TableKeyed where TableKey == ObjectIdentifier {
    /// An object's address, mixed (Fibonacci hashing, the high half folded
    /// onto the low bits the mask keeps): a few instructions where `Hasher`'s
    /// SipHash costs a hundred, and safe because malloc, not a client,
    /// chooses the addresses.
    static func tableHash(_ key: ObjectIdentifier) -> Int {
        let product = UInt64(UInt(bitPattern: key) >> 4) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: product ^ product >> 32)
    }
}

/// A hash set of class instances, each found by a key it carries itself:
/// open addressing with linear probing, at most 7/8 full (a lookup then
/// probes about three slots on average, a miss about ten at worst).
///
/// The index holds about three entries per observation (a node among its
/// parent's children, an observation in its client's table), a million
/// observations and more. A `Dictionary` entry stores its key beside the
/// reference and runs 3/8 to 3/4 full: 32 to 64 bytes an entry with a
/// `String` key. A slot here is the reference alone, 8 bytes, 9 to 18 an entry.
struct ReferenceTable<Element: TableKeyed> {
    private var slots: [Element?] = []
    /// How many elements the table holds.
    private(set) var count: Int32 = 0

    var isEmpty: Bool { count == 0 }

    /// The element whose key is `key`, if any.
    func find(_ key: Element.TableKey) -> Element? {
        findUnretained(key)?.takeUnretainedValue()
    }

    /// ``find(_:)`` without a reference to count: the table holds the
    /// element while it is in it, so the caller may use it until it changes
    /// the table. The slots are read as `Unmanaged` (the same one word as
    /// `Element?`, nil as 0): a slot read as `Element?` was retained.
    @inline(__always)
    func findUnretained(_ key: Element.TableKey) -> Unmanaged<Element>? {
        guard count > 0 else { return nil }
        return slots.withUnsafeBufferPointer { typed in typed.withMemoryRebound(to: Unmanaged<Element>?.self) { slots in
            // A small table is read whole: comparing a few keys costs less than
            // hashing one (most nodes have one or two children).
            if slots.count <= 4 {
                for case let element? in slots where element._withUnsafeGuaranteedRef({ $0.tableKey == key }) {
                    return element
                }
                return nil
            }
            let mask = slots.count - 1
            var index = Element.tableHash(key) & mask
            while let element = slots[index] {
                if element._withUnsafeGuaranteedRef({ $0.tableKey == key }) { return element }
                index = (index + 1) & mask
            }
            return nil
        } }
    }

    /// Adds `element`; its key must not be in the table yet.
    mutating func insert(_ element: Element) {
        if (Int(count) + 1) * 8 > slots.count * 7 { resize(to: max(2, slots.count * 2)) }
        let hash = Element.tableHash(element.tableKey)
        slots.withUnsafeMutableBufferPointer { Self.place(element, hash: hash, in: $0) }
        count += 1
    }

    /// Removes and returns the element whose key is `key`, if any.
    @discardableResult
    mutating func remove(_ key: Element.TableKey) -> Element? {
        guard count > 0 else { return nil }
        let mask = slots.count - 1
        var index = Element.tableHash(key) & mask
        while let element = slots[index] {
            if element.tableKey == key {
                slots[index] = nil
                count -= 1
                closeGap(at: index)
                if count == 0 {
                    slots = []
                } else if slots.count > 8 && Int(count) * 8 < slots.count {
                    resize(to: slots.count / 2)
                }
                return element
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Calls `body` with every element, in no particular order.
    func forEach(_ body: (Element) throws -> Void) rethrows {
        for case let element? in slots { try body(element) }
    }

    /// Whether `predicate` holds for every element, asking until it does not
    /// (in no particular order).
    func allSatisfy(_ predicate: (Element) -> Bool) -> Bool {
        for case let element? in slots where !predicate(element) { return false }
        return true
    }

    /// Every element, in no particular order.
    var elements: [Element] { slots.compactMap { $0 } }

    /// Takes every slot out (nil where none is), leaving the table empty,
    /// without a copy: a client's observations handed over to leave the
    /// index in slices (``SharedController/unregisterLater(_:count:of:)``).
    mutating func takeSlots() -> [Element?] {
        defer {
            slots = []
            count = 0
        }
        return slots
    }

    /// Puts `element` in the first free slot from its home (through the
    /// buffer: no uniqueness check of the array per slot).
    private static func place(_ element: consuming Element, hash: Int,
                              in slots: UnsafeMutableBufferPointer<Element?>) {
        let mask = slots.count - 1
        var index = hash & mask
        while slots[index] != nil { index = (index + 1) & mask }
        slots[index] = consume element
    }

    /// Backward-shift deletion: moves each later element of the probe run
    /// into the gap when its home slot allows, so lookups never need tombstones.
    private mutating func closeGap(at start: Int) {
        let mask = slots.count - 1
        var gap = start
        var index = (start + 1) & mask
        while let element = slots[index] {
            let home = Element.tableHash(element.tableKey) & mask
            // It may fill the gap unless its home lies cyclically in (gap, index].
            if (index &- home) & mask >= (index &- gap) & mask {
                slots[gap] = element
                slots[index] = nil
                gap = index
            }
            index = (index + 1) & mask
        }
    }

    /// Each element is moved, not copied, into the new slots: a copy retained
    /// and released every element (and, through an observation's key, its node).
    private mutating func resize(to capacity: Int) {
        // Filled through the buffer: `init(repeating:count:)` stored each nil
        // in a slower loop of its own.
        var old = [Element?](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            buffer.initialize(repeating: nil)
            initialized = capacity
        }
        swap(&old, &slots)
        slots.withUnsafeMutableBufferPointer { slots in
            old.withUnsafeMutableBufferPointer { old in
                guard let start = old.baseAddress else { return }
                for index in old.indices {
                    let slot = start + index
                    guard let element = slot.move() else {
                        slot.initialize(to: nil)
                        continue
                    }
                    slot.initialize(to: nil)
                    let hash = Element.tableHash(element.tableKey)
                    Self.place(element, hash: hash, in: slots)
                }
            }
        }
    }
}
