import Glibc
import KVOEngine
import KVOValues

/// Writes changes into a `history_batches` row's blob in ``HistoryBatchCodec``'s
/// format. One encoder serves every row of a commit, and keeps its buffer
/// from one commit to the next.
///
/// Noncopyable, and writing through a pointer into memory it owns: each
/// part of a change is one capacity check and a copy, where appending to a
/// `[UInt8]` cost a uniqueness and a capacity check per byte written and
/// encoding was most of the writer thread's work (docs/PERFORMANCE.md).
struct HistoryBatchEncoder: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    /// How many bytes the blob holds.
    private(set) var count = 0
    /// The change before.
    private var previous: ChangeRecord?
    /// Where a value that is not written as it is (an array, an object, a
    /// string with an escape) is written first, to learn its length.
    private var scratch: [UInt8] = []

    init() {}

    deinit { base?.deallocate() }

    /// Calls `body` with the blob, valid only during the call.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Starts a blob.
    mutating func begin() {
        count = 0
        reserve(1)
        put(HistoryBatchCodec.format)
        previous = nil
    }

    /// Appends `change`.
    mutating func append(_ change: ChangeRecord) {
        typealias Codec = HistoryBatchCodec
        // Each read of an optional value from the record copies (retains) it: read once.
        let old = change.old, new = change.new, path = change.path
        let same = previous?.object == change.object
        var flags: UInt8 = same ? Codec.sameObject : 0
        // A run of sets to one key path: `old` is the previous change's `new`.
        var oldIsPreviousNew = false
        if let old {
            if same, let previous, previous.path == path, let previousNew = previous.new {
                oldIsPreviousNew = Self.isSameText(old, previousNew)
            }
            flags |= oldIsPreviousNew ? Codec.oldIsPreviousNew : Codec.hasOld
        }
        if new != nil { flags |= Codec.hasNew }
        if change.memberIndex != nil { flags |= Codec.hasMemberIndex }
        if change.cause != nil { flags |= Codec.hasCause }
        if change.createdObject { flags |= Codec.createdObject }
        reserve(2 + 10 + 10 + 10 * change.indexes.count)
        put(Codec.code(of: change.kind))
        put(flags)
        if !same { putName(change.object) }
        putVarint(UInt64(path.count))
        for key in path { putName(key) }
        reserve(10 + 10 * change.indexes.count)
        putVarint(UInt64(change.indexes.count))
        for index in change.indexes { putInt(index) }
        if let old, !oldIsPreviousNew { putJSON(old) }
        if let new { putJSON(new) }
        reserve(20)
        putInt(change.existingKeys)
        if let memberIndex = change.memberIndex { putInt(memberIndex) }
        if let cause = change.cause { putName(cause.rawValue) }
        previous = change
    }

    /// Whether two scalars are written as the same JSON text (so that a
    /// value read back in place of the other is the same byte for byte).
    /// Arrays and objects are not compared: they are written out.
    private static func isSameText(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return sameUTF8(x, y)
        case (.number(let x), .number(let y)): return sameUTF8(x.literal, y.literal)
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    /// Byte equality: `==` on strings is canonical equivalence, which NFC and NFD spellings pass.
    private static func sameUTF8(_ x: String, _ y: String) -> Bool {
        guard x.utf8.count == y.utf8.count else { return false }
        // A run of sets usually hands the same string on (one change's `new` is the next one's `old`).
        let same = x.utf8.withContiguousStorageIfAvailable { left in
            y.utf8.withContiguousStorageIfAvailable { right in
                left.baseAddress == right.baseAddress || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        return same.flatMap { $0 } ?? x.utf8.elementsEqual(y.utf8)
    }

    // MARK: Writing

    /// Room for `needed` more bytes: the `put`s after it write without checking.
    @inline(__always)
    private mutating func reserve(_ needed: Int) {
        if _slowPath(capacity - count < needed) { grow(toHold: count + needed) }
    }

    private mutating func grow(toHold needed: Int) {
        let grown = max(needed, capacity * 2, 4096)
        let memory = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        if let base {
            memory.update(from: base, count: count)
            base.deallocate()
        }
        base = memory
        capacity = grown
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        base![count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count > 0 { (base! + count).update(from: bytes.baseAddress!, count: bytes.count) }
        count += bytes.count
    }

    /// At most 10 bytes.
    @inline(__always)
    private mutating func putVarint(_ number: UInt64) {
        var number = number
        while number >= 0x80 {
            put(UInt8(truncatingIfNeeded: number) | 0x80)
            number >>= 7
        }
        put(UInt8(number))
    }

    @inline(__always)
    private mutating func putInt(_ number: Int) {
        let wide = Int64(number)
        putVarint(UInt64(bitPattern: (wide << 1) ^ (wide >> 63)))
    }

    /// Its length (4 bytes, little-endian).
    @inline(__always)
    private mutating func putLength(_ length: Int) {
        for shift in stride(from: 0, to: 32, by: 8) { put(UInt8(truncatingIfNeeded: length >> shift)) }
    }

    /// A name (an object, a key, a cause) in NFC, after its length. ASCII,
    /// which is already NFC, is copied as it is; anything else goes through
    /// ``CanonicalName``.
    private mutating func putName(_ name: String) {
        let copied = name.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte >= 0x80 { return false }
            reserve(10 + utf8.count)
            putVarint(UInt64(utf8.count))
            put(utf8)
            return true
        }
        if copied == true { return }
        var canonical = CanonicalName.nfc(name)
        canonical.withUTF8 { utf8 in
            reserve(10 + utf8.count)
            putVarint(UInt64(utf8.count))
            put(utf8)
        }
    }

    /// Its length (4 bytes, little-endian), then the value as JSON. A string
    /// with nothing to escape (most) and a number are copied as they are.
    private mutating func putJSON(_ json: JSONValue) {
        switch json {
        case .string(let string):
            let copied = string.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
                guard JSONWriter.isPlainString(UnsafeRawBufferPointer(utf8)) else { return false }
                reserve(6 + utf8.count)
                putLength(utf8.count + 2)
                put(UInt8(ascii: "\""))
                put(utf8)
                put(UInt8(ascii: "\""))
                return true
            }
            if copied == true { return }
        case .number(let number):
            // A JSONNumber's literal is valid JSON as it is.
            var literal = number.literal
            literal.withUTF8 { utf8 in
                reserve(4 + utf8.count)
                putLength(utf8.count)
                put(utf8)
            }
            return
        default:
            break
        }
        var written = scratch
        scratch = []
        written.removeAll(keepingCapacity: true)
        JSONWriter.write(json, into: &written)
        reserve(4 + written.count)
        putLength(written.count)
        written.withUnsafeBufferPointer { put($0) }
        scratch = written
    }
}
